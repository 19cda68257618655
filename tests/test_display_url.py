"""Database URLs as the user gave them: the web view's read-only SQLite URI is shown as
the file's ``sqlite:///`` URL, and passwords never."""

from newsspider.storage.engine import display_url


def test_read_only_sqlite_uri_shows_the_path() -> None:
    assert display_url("sqlite:///file:/srv/news/data/corpus.db?mode=ro&uri=true") == (
        "sqlite:////srv/news/data/corpus.db"
    )
    assert display_url("sqlite:///file:/srv/a%20b.db?uri=true") == "sqlite:////srv/a b.db"


def test_plain_urls_hide_passwords() -> None:
    assert display_url("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"
    assert display_url("postgresql+psycopg://news:secret@db/news") == (
        "postgresql+psycopg://news:***@db/news"
    )
