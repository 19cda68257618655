"""``scrapy nightly``: every site crawled incrementally, one run at a time, with a report.

The command (``newsspider/commands/nightly.py``) parses options and calls
:func:`newsspider.nightly.run.run_nightly`. The modules, in the order a run uses them:

- ``lock``: the host's run lock (``flock``), so a second start exits at once;
- ``jobdir``: each site's resumable ``JOBDIR`` and the marker saying how it was left;
- ``crawl``: one site's crawler, what its signals report, and its recorded outcome;
- ``warc``: every fetched page recorded to the day's WARC of its site;
- ``run``: the run itself (lock, crawl every site, re-clean, report);
- ``cluster``: the same run shared by every worker of a cluster (``REDIS_URL``): joined
  in Redis instead of the lock, reported by the last worker over every worker's rows;
- ``report``: the report and the site health checks, pure functions of plain values.

Nothing is imported here, so ``newsspider.nightly.report`` (which ``storage`` and the
pipelines use for its values) loads without the crawl machinery.
"""
