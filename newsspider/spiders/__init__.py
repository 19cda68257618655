"""Site spiders, generated from the site table."""
