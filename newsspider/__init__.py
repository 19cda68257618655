"""newsspider: a Scrapy project that builds a clean Chinese news corpus (Zou & Zhong 2011 et al.)."""
