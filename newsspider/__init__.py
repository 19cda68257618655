"""newsspider: a Scrapy project that builds a clean Chinese news corpus.

Methods: Zou & Zhong 2011 (block statistics), Li & Jiang 2012, Jing & Zuo, Hou & Yang 2011.
"""
