"""The README and docs/ stay true: size, self-containment, settings, runnable examples.

- README.md stays a user's page (at most 15,500 bytes); the rest lives in docs/.
- Nothing in the repository's code or docs points outside it: no ``../shared``, no
  ``ALGORITHMS.md``/``STYLE.md``, no tracker issue numbers.
- docs/settings.md's table equals ``newsspider/settings.py``; the README's short one agrees.
- The README's shell examples run as written, top to bottom, in a bare copy of the
  repository against a temporary database; the few that need the network or run for long
  are skipped by :func:`skip_reason`, an explicit rule.
- docs/layout.md names every package and module that exists, and only those.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
from pathlib import Path

from tests.test_demo import bare_copy

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
SETTINGS = REPO / "newsspider" / "settings.py"
MAX_README_BYTES = 15_500

# -- self-containment ------------------------------------------------------------------

#: Folders and files whose text must stand alone.
SCANNED = ("README.md", "docs", "newsspider", "benchmarks", "deploy")
#: Text files among them (saved HTML pages are the publishers' text, not ours).
TEXT_SUFFIXES = {".py", ".md", ".txt", ".cfg", ".toml", ".conf", ".service", ".timer", ".jsonl"}
TEXT_NAMES = {"crontab"}
#: A path outside the repository, the files that restated the papers and the style, or a
#: tracker issue: "issue 7", "(issue 3)", "issues 4 and 5", "issue #12". Words such as
#: "a monthly issue" or ``text:issue`` carry no number and do not match.
FORBIDDEN = re.compile(
    r"\.\./shared|ALGORITHMS\.md|STYLE\.md|\bissues?\s*#?\d+", re.IGNORECASE
)


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = REPO / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files += [
            p
            for p in candidates
            if p.is_file()
            and "__pycache__" not in p.parts
            and (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES)
        ]
    return files


def test_readme_is_a_users_page():
    assert README.stat().st_size <= MAX_README_BYTES


def test_nothing_points_outside_the_repository():
    hits = [
        f"{path.relative_to(REPO)}:{n}: {m.group(0)}"
        for path in scanned_files()
        for n, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
        for m in FORBIDDEN.finditer(line)
    ]
    assert not hits, "\n".join(hits)


# -- settings --------------------------------------------------------------------------

#: Scrapy wiring, not tunables: module names and component tables.
WIRING = {
    "BOT_NAME",
    "SPIDER_MODULES",
    "NEWSPIDER_MODULE",
    "COMMANDS_MODULE",
    "ITEM_PIPELINES",
    "DOWNLOADER_MIDDLEWARES",
    "EXTENSIONS",
}
_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| `([^`]*)` \|", re.MULTILINE)


def defined_settings() -> dict[str, object]:
    """Every setting settings.py assigns, with its value, wiring left out."""
    source = SETTINGS.read_text("utf-8")
    values: dict[str, object] = {}
    exec(compile(source, str(SETTINGS), "exec"), values)
    names = [
        target.id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.isupper()
    ]
    return {name: values[name] for name in names if name not in WIRING}


def settings_table(text: str) -> dict[str, object]:
    """A markdown settings table (rows ``| `NAME` | `default` | ...``): name -> default."""
    return {name: ast.literal_eval(value) for name, value in _ROW.findall(text)}


def test_settings_doc_is_settings_py():
    """docs/settings.md lists every setting of settings.py with its default."""
    table, defined = settings_table((DOCS / "settings.md").read_text("utf-8")), defined_settings()
    assert sorted(table) == sorted(defined)
    for name, value in defined.items():
        assert (table[name], type(table[name])) == (value, type(value)), name


def test_readme_settings_are_settings_py():
    """The README's short table: real settings with their true defaults."""
    text = README.read_text("utf-8")
    section = text[text.index("## Settings") :]
    table, defined = settings_table(section[: section.index("\n## ", 1)]), defined_settings()
    assert len(table) >= 5
    for name, value in table.items():
        assert name in defined, name
        assert (value, type(value)) == (defined[name], type(defined[name])), name


# -- shell examples --------------------------------------------------------------------


def shell_examples(text: str) -> list[str]:
    """The commands of the ```sh and ```bash blocks, in order, continuation lines joined."""
    commands = []
    for block in re.findall(r"^```(?:sh|bash)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        pending = ""  # a command whose quoted string goes on over the next line
        for line in block.replace("\\\n", " ").splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            pending = f"{pending}\n{line}" if pending else line.strip()
            try:
                shlex.split(pending, comments=True)
            except ValueError:
                continue
            commands.append(pending)
            pending = ""
        assert not pending, f"unclosed quote in {pending!r}"
    return commands


def skip_reason(command: str) -> str | None:
    """Why an example is not run here, or None: it must run offline and exit 0.

    The rule: anything that reaches the network (a live crawl, a nightly run against the
    live sites, a URL given to ``scrapy extract``, the package index) or is the test suite
    itself. A crawl with ``REPLAY_ARCHIVE`` is offline and runs; so does ``--help``.
    """
    argv = shlex.split(command, comments=True)
    if argv[:2] == ["pip", "install"]:
        return "the package index"
    if argv[:3] == ["python", "-m", "pytest"]:
        return "the test suite itself"
    if argv[:2] == ["scrapy", "crawl"] and not any("REPLAY_ARCHIVE=" in a for a in argv):
        return "a live crawl"
    if argv[:2] == ["scrapy", "nightly"] and "--help" not in argv:
        return "a nightly run against the live sites"
    if argv[:2] == ["scrapy", "addsite"] and not any("REPLAY_ARCHIVE=" in a for a in argv):
        return "discovers a live site"
    if argv[:2] == ["scrapy", "backfill"]:
        return "reads a web archive"
    if argv[:3] == ["scrapy", "corpus", "migrate"]:
        return "needs a PostgreSQL server"
    if argv[:3] == ["scrapy", "sites", "check"] and not any("REPLAY_ARCHIVE=" in a for a in argv):
        return "checks live sites"
    # scrapy extract FILE_OR_URL [options]: the page comes first (--url only names a file's URL)
    if argv[:2] == ["scrapy", "extract"] and argv[2].startswith(("http://", "https://")):
        return "fetches a URL"
    return None


def test_the_skip_rule():
    assert skip_reason("scrapy crawl netease") == "a live crawl"
    assert skip_reason("scrapy crawl sina -s REPLAY_ARCHIVE=x.warc.gz") is None
    assert skip_reason("scrapy nightly --sites netease") is not None
    assert skip_reason("scrapy nightly --help  # options") is None
    assert skip_reason("scrapy extract https://news.163.com/a.html") is not None
    assert skip_reason("scrapy extract page.html --url https://news.163.com/a.html") is None
    assert skip_reason("scrapy corpus stats") is None
    assert skip_reason("scrapy addsite https://www.example-news.cn/ --write") is not None
    assert skip_reason("scrapy sites check example") is not None
    assert skip_reason("scrapy sites list") is None
    block = "```sh\na 'b\nc' # x\n# comment\nd \\\n  e\n```\n"
    assert shell_examples(block) == ["a 'b\nc' # x", "d    e"]


def test_readme_shell_examples_run_offline_top_to_bottom(tmp_path):
    commands = shell_examples(README.read_text("utf-8"))
    runnable = [c for c in commands if skip_reason(c) is None]
    assert "scrapy demo" in " ".join(runnable)
    assert len(runnable) >= len(commands) / 2, "most examples should run offline"
    clone = bare_copy(tmp_path)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'readme.db'}",
        "PYTHONPATH": str(clone),
    }
    failed = []
    for command in runnable:
        done = subprocess.run(
            ["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            failed.append(f"$ {command}\n(exit {done.returncode}) {done.stderr[-1500:]}")
    assert not failed, "\n\n".join(failed)


# -- docs ------------------------------------------------------------------------------

DOC_FILES = sorted(DOCS.glob("*.md"))


def test_docs_link_only_to_files_that_exist():
    for doc in [README, *DOC_FILES]:
        for target in re.findall(r"\]\(([^)#:]+)\)", doc.read_text("utf-8")):
            assert (doc.parent / target).exists(), f"{doc.name}: {target}"


def test_docs_name_only_benchmark_scripts_that_exist():
    for doc in [README, *DOC_FILES, REPO / "benchmarks" / "README.md"]:
        for script in re.findall(r"benchmarks/(\w+\.py)", doc.read_text("utf-8")):
            assert (REPO / "benchmarks" / script).is_file(), f"{doc.name}: {script}"


def test_layout_names_every_module_that_exists_and_no_other():
    # The map, not the section on packages still to come.
    layout = (DOCS / "layout.md").read_text("utf-8").split("## Where the next")[0]
    package = REPO / "newsspider"
    for path in re.findall(r"`(newsspider/[\w/.]*)`", layout):
        assert (REPO / path).exists(), path
    for entry in sorted(package.iterdir()):
        if entry.name.startswith(("_", ".")) or entry.suffix not in ("", ".py"):
            continue
        assert f"newsspider/{entry.name}" in layout, entry.name
    for sub in ("extraction", "storage"):
        for module in sorted((package / sub).glob("*.py")):
            if module.name != "__init__.py":
                assert module.name in layout, f"{sub}/{module.name}"


def test_every_scrapy_example_in_the_docs_names_a_real_command_and_options():
    """Examples that cannot run here (datasets, live sites) still name what exists:
    each ``scrapy COMMAND --option`` of README, docs/ and deploy/README.md is checked
    against ``scrapy COMMAND --help``."""
    options: dict[str, set[str]] = {}
    for doc in [README, *DOC_FILES, REPO / "deploy" / "README.md"]:
        for command in shell_examples(doc.read_text("utf-8")):
            argv = shlex.split(command, comments=True)
            if argv[:1] == ["scrapy"] and len(argv) > 1:
                options.setdefault(argv[1], set()).update(
                    a.split("=", 1)[0] for a in argv[2:] if a.startswith("--")
                )
    for name, used in sorted(options.items()):
        done = subprocess.run(
            ["scrapy", name, "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"scrapy {name}: {done.stderr[-500:]}"
        missing = sorted(o for o in used if o not in done.stdout)
        assert not missing, f"scrapy {name} has no {missing}"
