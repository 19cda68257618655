"""Scrapy settings for newsspider.

Only defaults live here; every value can be overridden with ``-s NAME=VALUE``.
"""

BOT_NAME = "newsspider"
SPIDER_MODULES = ["newsspider.spiders"]
NEWSPIDER_MODULE = "newsspider.spiders"
COMMANDS_MODULE = "newsspider.commands"

# Politeness: robots.txt obeyed, at least DOWNLOAD_DELAY between requests to one
# domain, and AutoThrottle on top, which stretches the delay when a site answers slowly
# (never below DOWNLOAD_DELAY, never above AUTOTHROTTLE_MAX_DELAY). Local test crawls and
# benchmarks switch both off explicitly (-s DOWNLOAD_DELAY=0 -s AUTOTHROTTLE_ENABLED=False);
# replayed crawls (REPLAY_ARCHIVE) skip the download slots and are not slowed at all.
ROBOTSTXT_OBEY = True
DOWNLOAD_DELAY = 1.0
CONCURRENT_REQUESTS_PER_DOMAIN = 4
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
# Who is asking, so a site's operator can see it: name, version, purpose. The project has
# no public address to put here; whoever runs a crawl should add their own contact, e.g.
#   -s USER_AGENT="newsspider/0.1 (+mailto:you@example.org; Chinese news corpus research crawler)"
NEWSSPIDER_VERSION = "0.1"
USER_AGENT = f"newsspider/{NEWSSPIDER_VERSION} (Chinese news corpus research crawler)"
# A news page over 10 MiB is not an article (a video, an archive, a runaway page): the
# download is cancelled, logged and counted (newsspider/fetch_failed_reason/too_large).
# Feeds get their own, larger limits (newsspider/spiders/news.py FEED_META).
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024
FEED_EXPORT_ENCODING = "utf-8"

# Extraction method for crawls and the default of `scrapy extract`/`evaluate` --method, a name
# of newsspider/extraction/registry.py: blockstats (Zou & Zhong with our improvements),
# blockstats-paper (Zou & Zhong alone), punctuation (Li & Jiang), xpath (Hou & Yang),
# visual, visual+blockstats, visual+blockstats-best (Jing & Zuo).
EXTRACTOR = "blockstats"

# Item pipelines (newsspider/pipelines): extraction, then line-hash cleaning + SQL.
ITEM_PIPELINES = {
    "newsspider.pipelines.ExtractionPipeline": 300,
    "newsspider.pipelines.CorpusPipeline": 800,
}
# SQLAlchemy URL; None: $DATABASE_URL, else sqlite:///<project>/data/corpus.db
DATABASE_URL = None
CORPUS_ENABLED = True  # False: CorpusPipeline is off (extract without storing)
NEWS_DB_BATCH = 50  # articles per transaction
NEWS_DB_BUSY_TIMEOUT = 30.0  # seconds a SQLite writer waits for a lock
# Bytes of a SQLite corpus read through a memory map instead of read() calls: the index
# lookups of reprint detection and the line table jump around the file (docs/reprints.md).
NEWS_DB_SQLITE_MMAP = 1 << 30
# A write batch that fails transiently (SQLite locked past the busy timeout, PostgreSQL
# restarting) is retried whole, with a doubling wait, for up to this many seconds; then its
# articles are dropped (DatabaseUnavailable) and the crawl closes (newsspider/pipelines/corpus.py).
NEWS_DB_RETRY_SECONDS = 300.0
# ``scrapy corpus migrate``: rows per transaction of the copy into PostgreSQL
MIGRATE_BATCH = 2000
# Li & Jiang 2012 §2.2 line-hash table: a line is boilerplate once LC > 1 + RC / L
LINEHASH_ENABLED = True
LINEHASH_L = 50
LINEHASH_PRUNE_EVERY = 100
LINEHASH_ONCE_PER_PAGE = True

# Offline replay / recording (newsspider/replay.py). Off unless set:
#   -s REPLAY_ARCHIVE=x.warc.gz  answer every request from the archive, never download
#   -s WARC_OUTPUT=x.warc.gz     record every downloaded response
# 950: after robots.txt, user-agent and cookie middlewares, as in a live crawl.
DOWNLOADER_MIDDLEWARES = {
    "newsspider.incremental.StoredUrlFilter": 60,  # after OffsiteMiddleware, before robots.txt
    # anti-bot challenges: after decompression (590), before RetryMiddleware (550)
    "newsspider.challenges.ChallengeMiddleware": 555,
    "newsspider.replay.WarcReplayMiddleware": 950,
}
EXTENSIONS = {
    "newsspider.replay.WarcRecorderExtension": 500,
    "newsspider.progress.CrawlProgress": 510,  # live status: PROGRESS_* below
    # newsspider/extensions.py: the closing summary line and exit status of every crawl,
    # and network failures logged in one line instead of with a traceback
    "newsspider.extensions.CrawlSummary": 520,
    "newsspider.extensions.NetworkErrorsOneLine": 530,
}
REPLAY_ARCHIVE = None
WARC_OUTPUT = None
# Anti-bot challenges (newsspider/challenges/, docs/crawling.md#challenge-pages): a 521/412
# cookie script, a 200 verification or 访问过于频繁 page is never stored; it is retried up to
# CHALLENGE_RETRIES times after CHALLENGE_BACKOFF seconds, doubled on each further try, with
# the cookie a plain script sets; then dropped and counted (a crawl mostly challenged: exit 6).
CHALLENGE_RETRIES = 2
CHALLENGE_BACKOFF = 5.0

# Sitemaps read per sitemap index, newest first; 0 = all (a backfill)
NEWS_SITEMAPS_PER_INDEX = 2
# Multi-page articles (newsspider/extraction/pager.py): pages fetched and joined per article;
# 1 = store the first page alone (docs/crawling.md, "Multi-page articles")
MULTIPAGE_MAX_PAGES = 20
# Unattended crawls need no remote-control or telnet server listening on localhost.
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

# Incremental crawling (newsspider/incremental.py): article URLs already stored are not
# downloaded again. Off for `scrapy crawl` (a re-crawl refreshes rows); nightly turns it on.
INCREMENTAL = False
# scrapy nightly (newsspider/nightly/run.py); relative paths are under the project
NIGHTLY_LOCK = "data/nightly.lock"
NIGHTLY_JOBDIR = "data/jobs"  # JOBDIR per site: data/jobs/<site>; "" = none
NIGHTLY_RESUME_HOURS = 12  # a cleanly stopped run is resumed by a start within this
NIGHTLY_HEALTH_RUNS = 7  # earlier good nightly runs each site is compared with
NIGHTLY_HEALTH_K = 3.0  # health band: median ± k·MAD (newsspider/nightly/report.py)
RECLEAN_GROWTH = 2.0  # nightly re-cleans a site when its RC grew by this factor; 0 = off
# Re-cleaning: the first re-clean of a site waits for RC >= RECLEAN_MIN_RC.
RECLEAN_MIN_RC = 100
# Coverage (newsspider/coverage/, docs/crawling.md#coverage): the article URLs a site's news
# sitemaps and feeds list for the last COVERAGE_DAYS local days (2: today and yesterday),
# compared with the corpus by scrapy nightly (which then fetches the missing ones) and
# scrapy sites check; a site below COVERAGE_WARN (a share) gets a WARNING, and sites check
# exits 3. At most COVERAGE_MAX_FETCHES fetches per site (robots.txt, start pages, feeds,
# sitemaps). COVERAGE_ENABLED = False: nightly neither compares nor fills.
COVERAGE_ENABLED = True
COVERAGE_DAYS = 2
COVERAGE_WARN = 0.9
COVERAGE_MAX_FETCHES = 16

# Extraction off the reactor thread (newsspider/workers.py): CPU methods
# run in worker processes shared by the process's crawlers; visual methods in a render thread.
EXTRACTION_WORKERS = "auto"  # processes: "auto" = cores - 1 (at most 4); 0 = in the reactor thread
EXTRACTION_WORKER_MAX_TASKS = 10000  # pages per worker before a fresh one replaces it; 0 = never
# The cyclic garbage collector's first threshold in a crawl process (Python's: 700); 0 = Python's.
CRAWL_GC_THRESHOLD = 10000
# Items of one response processed in parallel: an article page yields one, and Scrapy starts
# this many tasks per response whatever it yields (Scrapy's 100 spent CPU on idle tasks).
CONCURRENT_ITEMS = 8

# Progress (newsspider/progress.py). Commands with long loops (evaluate, reclean, corpus
# export, makewarc, train) draw a tqdm bar on stderr only when it is a terminal. A crawl's
# live status, by the CrawlProgress extension: pages fetched, pages/s, articles stored,
# dropped and fetch failures, as a status line per spider when stderr is a terminal, else
# (cron, systemd, Scrapyd, or LOG_FILE set) as an INFO log line every PROGRESS_LOG_INTERVAL
# seconds. Scrapy's once-a-minute "Crawled N pages" line (LogStats) would repeat its pages
# and rates, so it is off (-s LOGSTATS_INTERVAL=60 brings it back).
PROGRESS_BAR = True  # the live status line on a terminal; False: the log lines instead
PROGRESS_LOG_INTERVAL = 60.0  # seconds between status log lines; 0 = none
LOGSTATS_INTERVAL = 0.0  # Scrapy's LogStats line: off, CrawlProgress logs the same and more

# The web view, `scrapy corpus serve` (newsspider/web/, docs/web.md): read-only, on
# 127.0.0.1 unless told otherwise (any other address is served with a warning).
WEB_HOST = "127.0.0.1"
WEB_PORT = 8000
WEB_TOKEN = None  # an access token the pages require (also $NEWSSPIDER_WEB_TOKEN); None: none

# Re-extraction (`scrapy reextract`, newsspider/reextract.py, docs/benchmarks.md) and the
# nightly WARC recording it reads: every page a nightly run fetches is appended to
# NIGHTLY_WARC_DIR/<site>/<YYYY-MM-DD>.warc.gz (relative to the project; "" = off), and
# archives older than NIGHTLY_WARC_KEEP_DAYS days are deleted at the start of a run
# (0 = keep every archive, which a re-extraction of the whole corpus needs).
REEXTRACT_WORKERS = "auto"  # scrapy reextract's processes: "auto" = one per core; 0 = in-process
NIGHTLY_WARC_DIR = "data/warc"
NIGHTLY_WARC_KEEP_DAYS = 0

# Reprint detection (newsspider/reprints/, docs/reprints.md): every stored article gets a
# story_id, shared by the reprints of one text (other sites, later nights, edits,
# traditional script). Values chosen from benchmarks/reprints.py; after a change,
# `scrapy corpus reprints --rebuild` regroups the stored articles.
REPRINTS_ENABLED = True  # assign stories as each batch of articles is stored
REPRINTS_THRESHOLD = 0.5  # overlap coefficient of two texts' shingle sets that makes one story
REPRINTS_MIN_CHARS = 150  # normalised characters below which a text is never grouped

# Cluster mode (newsspider/cluster/, docs/cluster.md): with REDIS_URL set, a crawl takes its
# requests from a frontier shared in Redis (scrapy-redis's scheduler, FIFO queue and
# duplicate filter), so any number of workers on any number of machines run the same
# command against one Redis and one PostgreSQL. The start pages are seeded once per run,
# by the first worker of a run; a worker closes once the shared queue has been empty for
# CLUSTER_IDLE_CLOSE seconds, and the last one out deletes the run's keys. DOWNLOAD_DELAY
# (stretched by AutoThrottle) is kept per domain across all workers by a Lua script in Redis.
REDIS_URL = None  # redis://host:port/db; None: a local crawl, exactly as without cluster mode
CLUSTER_IDLE_CLOSE = 30.0  # seconds the shared queue stays empty before a worker closes
CLUSTER_WORKER_TIMEOUT = 60.0  # a worker silent this long counts as dead (SIGKILL, lost machine)

# Sites (newsspider/sites/, docs/crawling.md#sites): the built-in rows ship in
# newsspider/sites.toml; a user's own TOML file adds sites and overrides built-in ones by
# key (used when it exists; relative to the project folder). `scrapy addsite URL --write`
# writes there. scrapy nightly crawls NIGHTLY_SITES when set (KEY,KEY), else every row
# that is enabled (the built-in eight and the user's rows; unchecked catalogue rows stay out).
SITES_FILE = "sites.toml"
NIGHTLY_SITES = ""
SPIDER_LOADER_CLASS = "newsspider.spiders.loader.SiteSpiderLoader"
# scrapy sites check (newsspider/discovery/check.py): at most this many fetches per site
# (start pages and feeds, 2 sitemaps of an index, 2 list pages, 3 sampled articles;
# robots.txt not counted), so checking every row stays a light touch on each site.
SITES_CHECK_MAX_FETCHES = 12
# ... and at most this many more for the row's reach (the site's robots.txt sitemaps, the
# list pages the crawl requests and one level deeper; docs/crawling.md#reach), judged
# against ADDSITE_MIN_REACH. 0: no reach.
SITES_CHECK_REACH_FETCHES = 24
# Discovery (`scrapy addsite URL`, `scrapy crawl news -a url=URL`; newsspider/discovery/):
# at most this many fetches per site (home, robots.txt, feeds, sitemaps, sections, their
# pagers, samples), the pages sampled per URL group, and the section pages of the home page
# read. Each section's pager is followed DISCOVERY_LIST_PAGES pages on (while 24 fetches are
# left for the samples); a row whose lists go deeper than the crawl's depth 2 gets a
# depth_limit, at most DISCOVERY_MAX_DEPTH. `scrapy addsite --write` writes a row whose
# replayed crawl reaches less than ADDSITE_MIN_REACH of the article URLs seen only with
# --force; `scrapy sites check` fails a site below it (docs/crawling.md#reach).
DISCOVERY_MAX_FETCHES = 80
DISCOVERY_SAMPLES = 3
DISCOVERY_SECTIONS = 6
DISCOVERY_LIST_PAGES = 3
DISCOVERY_MAX_DEPTH = 6
ADDSITE_MIN_REACH = 0.9

# Backfill (`scrapy backfill`, newsspider/backfill/, docs/backfill.md): web archives ask for
# moderation, so a backfill runs at this delay and concurrency per archive host (a command
# line -s DOWNLOAD_DELAY=... still wins), and a 429 or 503 waits its Retry-After, else
# BACKFILL_BACKOFF seconds doubled on each further try (at most BACKFILL_MAX_BACKOFF), up to
# BACKFILL_BACKOFF_TRIES tries before the answer counts as a failure.
BACKFILL_DOWNLOAD_DELAY = 1.0
BACKFILL_CONCURRENCY = 2
BACKFILL_BACKOFF = 5.0
BACKFILL_MAX_BACKOFF = 300.0
BACKFILL_BACKOFF_TRIES = 5
