"""PostgreSQL search plans at scale: the statement ``Corpus.search`` runs, against the
alternatives a fix could choose, each under ``EXPLAIN (ANALYZE, BUFFERS)``.

    python benchmarks/scale_plans.py postgresql+psycopg://...  [--plans FILE]

Per query of ``benchmarks/scale.py`` (1, 2, 4, 7 characters; common, rare, absent), without
filters and with a site and the last 90 days, the execution time (ms, from the plan) and
the plan's shape of:

- **as is**: the captured statement of ``Corpus.search(q, limit=20)`` (``ILIKE``);
- **LIKE**: the same with ``LIKE`` (the answers are the same for a query without cased
  letters, as every Chinese query; ``ILIKE`` lower-cases each candidate's whole text);
- **walk**: the same under ``enable_bitmapscan = off``: the time-ordered index walk;
- **GIN**: under ``enable_indexscan = off``: the trigram bitmap, then a sort;
- **two steps**: the newest 2,000 rows (of the filters) tested first, the trigram index
  only when they hold fewer than 20 hits: the plan a fix would force.

Every statement runs under a 20 s ``statement_timeout`` (a time-out shows as ``>20000``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scale  # noqa: E402
from sqlalchemy import text  # noqa: E402

from newsspider.storage import Corpus, engine_for  # noqa: E402

WINDOW = 2000
FILTERS = ("none", "site + 90 days")


def run_plan(conn, stmt: str, params, settings: tuple[str, ...] = ()) -> tuple[float | None, str]:
    conn.exec_driver_sql("SET statement_timeout = '20s'")
    for s in settings:
        conn.exec_driver_sql(s)
    try:
        rows = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + stmt, params).all()
    except Exception as exc:  # noqa: BLE001 - a time-out is a result
        conn.rollback()
        return None, f"failed: {str(exc).splitlines()[0]}"
    finally:
        if conn.in_transaction():
            conn.rollback()
    plan = "\n".join(r[0] for r in rows)
    m = re.search(r"Execution Time: ([\d.]+) ms", plan)
    return (float(m.group(1)) if m else None), plan


def two_steps(stmt: str) -> str:
    """The newest-window statement of the two steps: the captured statement with its
    WHERE split into the filters (kept in the window) and the match (tested on it)."""
    flat = " ".join(stmt.split())
    m = re.match(r"SELECT (.*?) FROM articles WHERE (.*) ORDER BY (.*) LIMIT (\S+)$", flat)
    assert m, flat
    cols, where, order, limit = m.groups()
    match = re.search(
        r"\(?articles\.title I?LIKE \S+ ESCAPE '\\' OR articles\.content I?LIKE \S+ ESCAPE '\\'\)?",
        where,
    )
    assert match, where
    filters = (where[: match.start()] + where[match.end() :]).strip()
    filters = re.sub(r"^AND\s+|\s+AND$", "", re.sub(r"AND\s+AND", "AND", filters)).strip() or "true"
    inner = ", ".join(c.replace("articles.", "") for c in cols.split(", "))
    return (
        f"SELECT {inner} FROM (SELECT {inner}, content FROM articles WHERE {filters} "
        f"ORDER BY {order} LIMIT {WINDOW}) AS articles WHERE {match.group(0)} "
        f"ORDER BY {order.replace('articles.', '')} LIMIT {limit}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("--plans", type=Path, default=None)
    args = ap.parse_args()
    engine = engine_for(args.url)
    corpus = Corpus(engine, setup=False)
    cap = scale.Capture(engine)
    with engine.connect() as conn:
        n = conn.scalar(text("SELECT count(*) FROM articles"))
    out = []
    print(f"\n### PostgreSQL plans, {n:,} articles: execution ms from EXPLAIN (ANALYZE, BUFFERS)\n")
    print("| query | chars | kind | filter | hits | as is (ILIKE) | plan as is | LIKE | walk | GIN + sort "
          "| two steps (window hits) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for q, chars, kind in scale.QUERIES:
        for f in FILTERS:
            cap.statements.clear()
            hits = corpus.search(q, limit=20, **scale.filter_args(f))
            stmt, params = cap.search_statement()
            like_stmt = stmt.replace(" ILIKE ", " LIKE ")
            with engine.connect() as conn:
                as_is, plan = run_plan(conn, stmt, params)
                like, like_plan = run_plan(conn, like_stmt, params)
                walk, walk_plan = run_plan(conn, like_stmt, params, ("SET enable_bitmapscan = off",))
                gin, gin_plan = run_plan(conn, like_stmt, params, ("SET enable_indexscan = off",))
                window = two_steps(like_stmt)
                w_ms, w_plan = run_plan(conn, window, params)
                w_hits = len(conn.exec_driver_sql(window, params).all())
                conn.rollback()
            steps = (w_ms or 0) + (0 if w_hits >= 20 else (like or 0))

            def ms(v: float | None) -> str:
                return ">20000" if v is None else f"{v:.0f}"

            print(f"| {q} | {chars} | {kind} | {f} | {len(hits)} | {ms(as_is)} | "
                  f"{scale.plan_summary(plan)} | {ms(like)} | {ms(walk)} | {ms(gin)} | "
                  f"{steps:.0f} ({w_hits}) |")  # fmt: skip
            sys.stdout.flush()
            out.append(f"-- {q} ({chars} chars, {kind}), filter {f}: as is\n{stmt}\n-- {params}\n{plan}\n"
                       f"-- LIKE\n{like_plan}\n-- walk (enable_bitmapscan off)\n{walk_plan}\n"
                       f"-- GIN (enable_indexscan off)\n{gin_plan}\n-- newest-window step\n{window}\n{w_plan}\n")  # fmt: skip
    if args.plans:
        args.plans.write_text("\n".join(out), encoding="utf-8")


if __name__ == "__main__":
    main()
