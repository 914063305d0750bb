"""llamaindex.code under stress: every grammar, on real, generated and garbage text, each grammar in its own process.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/code_engine_stress.py [--generated 200] [--garbage 300] [--seed 0]

For each tree-sitter grammar of :data:`core.engines.llamaindex_code.LANGUAGE_GRAMMARS` a child process splits,
with the engine (``language`` the grammar or auto, ``max_chars`` drawn from 40 to 2,000, or ``count_mode`` token):
the repository's own files in that language (Python, C, shell), ``--generated`` files written from the
language's constructs (functions, classes, nesting, comments, strings with non-ASCII text, long lines, CRLF),
and ``--garbage`` texts drawn by hypothesis (any Unicode, and soups of the language's tokens and brackets).
Counted per grammar: splits; refused (the grammar could not read the text: CodeSplitter's ValueError, a
ConfigError); crashed and stopped (the engine parses in a bounded child of its own: a crash in a grammar's C or a
parse past ``split_seconds`` comes back as an error naming the file; each such input is kept in ``--keep``); nodes,
and those not placed ``exact`` (rewritten or unplaced: CodeSplitter's chunks out of the source's order). Every
node keeps the span contract (an exact node is its slice of the source, starts in order).

The script's own child per grammar is watched too: one that dies or runs past ``--seconds`` is reported. Exit
status 0 only when every grammar's child finished (no crash reached the caller, no assertion failed). The children
are forked from this process once it has imported what they all need (LlamaIndex, NLTK's data, tiktoken's
encoding, hypothesis: ~8 s a child when each imported them itself), as the app forks its split children after
``prepare()``; no grammar is loaded before the fork. ``--child language:seed`` runs one grammar here, in-process.
``tests/test_engines_code.py`` runs this script small.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Constructs per language: each a template whose {n} is a name and {s} a string's text.
CONSTRUCTS: dict[str, list[str]] = {
    "python": [
        "def {n}(a, b=1, *args, **kw):\n    '''{s}'''\n    if a:\n        return [x for x in args if x]\n    return {{'k': b}}\n",
        "class {n}(Base):\n    x: int = 0\n\n    def m(self):\n        # {s}\n        with open(p) as f:\n            yield from f\n",
        "@decorator\nasync def {n}():\n    try:\n        await go(f'{s}')\n    except E as e:\n        raise X from e\n",
        "{n} = lambda q: (q, [q, {{q: (q,)}}])\n",
    ],
    "javascript": [
        "function {n}(a, b = 1) {{\n  // {s}\n  return a ? [b, ...a] : {{ k: `{s} ${{b}}` }};\n}}\n",
        "class {n} extends B {{\n  constructor() {{ super(); this.x = 1; }}\n  get y() {{ return /re[a-z]+/g; }}\n}}\n",
        "const {n} = async (x) => {{ for (const k of x) {{ await k; }} }};\n",
        "export default {{ {n}: '{s}' }};\n",
    ],
    "typescript": [
        "interface {n} {{ a: string; b?: number[]; }}\n",
        "export function {n}<T extends object>(x: T): Promise<T> {{\n  /* {s} */\n  return Promise.resolve(x);\n}}\n",
        "type {n} = {{ [k: string]: Array<Map<string, number>> }} | null;\n",
        "enum {n} {{ A = 1, B, C = '{s}' }}\n",
    ],
    "java": [
        "public class {n} {{\n  // {s}\n  private int x;\n  public {n}() {{ this.x = 1; }}\n}}\n",
        'interface {n} {{ default void run() {{ System.out.println("{s}"); }} }}\n',
        "enum {n} {{ A, B; int f() {{ return switch (this) {{ case A -> 1; default -> 2; }}; }} }}\n",
    ],
    "go": [
        "func {n}(a int, b ...string) (int, error) {{\n\t// {s}\n\tfor i := range b {{\n\t\t_ = i\n\t}}\n\treturn a, nil\n}}\n",
        'type {n} struct {{\n\tA string `json:"a"`\n\tB []map[string]int\n}}\n',
        'var {n} = map[string]func() int{{"{s}": func() int {{ return 1 }}}}\n',
    ],
    "rust": [
        "pub fn {n}<'a, T: Clone>(x: &'a [T]) -> Option<&'a T> {{\n    // {s}\n    x.first()\n}}\n",
        "#[derive(Debug)]\nstruct {n} {{ a: u8, b: Vec<String> }}\n",
        'impl {n} {{ fn m(&self) -> String {{ format!("{s} {{}}", r#"raw"#) }} }}\n',
        "macro_rules! {n} {{ ($x:expr) => {{ $x + 1 }}; }}\n",
    ],
    "c": [
        "static int {n}(int a, char **b) {{\n  /* {s} */\n  for (int i = 0; i < a; i++) {{ if (b[i]) return i; }}\n  return -1;\n}}\n",
        "#define {n}(x) ((x) * 2)\nstruct {n}_s {{ int a; union {{ float f; int i; }} u; }};\n",
        '#ifdef {n}\nconst char *s = "{s}";\n#endif\n',
    ],
    "cpp": [
        "template <typename T>\nclass {n} : public B<T> {{\n public:\n  // {s}\n  auto f() const -> T {{ return T{{}}; }}\n}};\n",
        "namespace {n} {{ constexpr int k = 3; std::vector<int> v{{1, 2}}; }}\n",
        'auto {n} = [&](int x) {{ return R"({s})"; }};\n',
    ],
    "csharp": [
        "public class {n} {{\n  // {s}\n  public int X {{ get; set; }}\n  public async Task<int> M() => await Task.FromResult(1);\n}}\n",
        "namespace {n} {{ record R(int A, string B); }}\n",
        'var {n} = $"{s} {{x}}";\n',
    ],
    "ruby": [
        "def {n}(a, *b, k: 1)\n  # {s}\n  b.each {{ |x| puts x }}\n  a ? k : nil\nend\n",
        'class {n} < Base\n  attr_reader :x\n  def initialize; @x = "{s} #{{1}}"; end\nend\n',
        "module {n}; X = %w[a b c]; end\n",
    ],
    "php": [
        "<?php\nfunction {n}($a, ...$b) {{\n  // {s}\n  return array_map(fn($x) => $x * 2, $b);\n}}\n",
        "<?php\nclass {n} extends B {{ public function __construct(private int $x = 1) {{}} }}\n",
        "<?php\n$${n} = <<<EOT\n{s}\nEOT;\n",
    ],
    "kotlin": [
        "fun {n}(a: Int, vararg b: String): Int {{\n    // {s}\n    return b.size + a\n}}\n",
        "data class {n}(val a: Int, val b: List<String> = listOf())\n",
        'object {n} {{ val s = "{s} ${{1 + 1}}" }}\n',
    ],
    "swift": [
        "func {n}(_ a: Int, b: [String] = []) -> Int? {{\n    // {s}\n    guard a > 0 else {{ return nil }}\n    return a\n}}\n",
        'struct {n}: Codable {{ var a: Int; let b: String = "{s}" }}\n',
        "enum {n} {{ case a(Int), b }}\n",
    ],
    "scala": [
        "def {n}[T](a: T, b: Int = 1): Option[T] = {{\n  // {s}\n  if (b > 0) Some(a) else None\n}}\n",
        "case class {n}(a: Int, b: String)\n",
        'object {n} {{ val s = s"{s} ${{1}}" }}\n',
    ],
    "bash": [
        '{n}() {{\n  # {s}\n  local a="$1"\n  for x in "$@"; do echo "$x"; done\n  [[ -n $a ]] && return 0\n}}\n',
        'case "$1" in\n  a|b) {n}=1 ;;\n  *) cat <<EOF\n{s}\nEOF\n  ;;\nesac\n',
        "if [ -f /tmp/{n} ]; then echo $(( 1 + 2 )); fi\n",
    ],
    "sql": [
        "CREATE TABLE {n} (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '{s}');\n",
        "SELECT a.id, count(*) FROM {n} a JOIN b ON a.id = b.a_id WHERE a.x > 1 GROUP BY a.id;\n",
        "-- {s}\nINSERT INTO {n} (a, b) VALUES (1, 'x'), (2, 'y');\n",
    ],
}
CONSTRUCTS["tsx"] = [*CONSTRUCTS["typescript"], "const {n} = () => <div className=\"a\">{{'{s}'}}<b/></div>;\n"]
WORDS = ("naïve", "日本語", "emoji 😀", "tab\tinside", "quote ' and \"", "back\\slash", "Ünïcödé", "a" * 300)
# The repository's own files, by grammar (written by people, for other reasons than this script).
OWN_FILES = {"python": "core/**/*.py", "c": "core/**/*.c", "bash": "scripts/*.sh"}


def generated(language: str, rng: random.Random) -> str:
    """A file of the language's constructs: 1 to 40 of them, some nested in a repeated block, names and strings drawn."""
    parts = []
    for i in range(rng.randint(1, 40)):
        part = rng.choice(CONSTRUCTS[language]).format(n=f"name_{i}_{rng.randint(0, 999)}", s=rng.choice(WORDS))
        parts.append(part * rng.choice((1, 1, 1, 5)))
    text = "\n".join(parts)
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text


def own_files(language: str, count: int) -> list[tuple[str, str]]:
    pattern = OWN_FILES.get(language)
    paths = sorted(ROOT.glob(pattern))[:count] if pattern else []
    return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in paths]


def garbage_strategy(language: str):  # noqa: ANN201  a hypothesis strategy
    from hypothesis import strategies as st

    tokens = sorted({token for template in CONSTRUCTS[language] for token in template.split()})
    brackets = list("{}()[]<>\"'`;:,.#/\\*$@%\n\t ")
    soup = st.lists(st.sampled_from(tokens + brackets), max_size=400).map("".join)
    any_text = st.text(max_size=600)
    unicode_soup = st.lists(st.one_of(st.sampled_from(brackets + tokens), st.characters()), max_size=800).map("".join)
    return st.one_of(soup, any_text, unicode_soup)


# -- the child: one grammar ----------------------------------------------------------------------


def run_grammar(language: str, generated_count: int, garbage_count: int, seed: int, keep: Path, own: int) -> dict:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    from core.engines.llamaindex_code import EXTENSIONS
    from core.errors import ConfigError, WorkLimitError, WorkTimeoutError
    from core.schema import Document
    from core.spans.recovery import SPAN_STATUS_KEY
    from core.splitters import SPLITTERS

    suffix = next((ext for ext, name in EXTENSIONS.items() if name == language), ".txt")
    rng = random.Random(f"{seed}-{language}")
    counts = {"splits": 0, "refused": 0, "crashed": 0, "stopped": 0, "nodes": 0, "not_exact": 0, "chars": 0}

    def split(text: str, name: str) -> None:
        keep.write_text(json.dumps({"language": language, "name": name, "text": text}))
        settings_ = {"max_chars": rng.randint(40, 2000)}
        if rng.random() < 0.2:
            settings_ = {"count_mode": "token", "max_tokens": rng.randint(16, 400)}
        engine = SPLITTERS.create("llamaindex.code", language=rng.choice((language, "auto")), **settings_)
        document = Document(text=text, metadata={"file_name": f"{name}{suffix}"})
        counts["splits"] += 1
        counts["chars"] += len(text)
        try:
            nodes = engine.split([document])
        except ConfigError:
            counts["refused"] += 1
            return
        except WorkLimitError as exc:  # the engine's child died (a crash in the grammar's C) or ran out of time
            kind = "stopped" if isinstance(exc, WorkTimeoutError) else "crashed"
            counts[kind] += 1
            kept = keep.with_name(f"{keep.stem}-{kind}-{counts[kind]}.json")
            kept.write_text(json.dumps({"language": language, "settings": settings_, "error": str(exc), "text": text}))
            return
        counts["nodes"] += len(nodes)
        starts = []
        for node in nodes:
            # The span contract, whatever the framework did: an exact node is its slice, an unplaced one empty.
            status = node.metadata[SPAN_STATUS_KEY]
            assert 0 <= node.start_char <= node.end_char <= len(text), name
            if status == "exact":
                assert text[node.start_char : node.end_char] == node.text, name
            else:
                counts["not_exact"] += 1
                assert status == "rewritten" or node.start_char == node.end_char, (name, status)
            starts.append(node.start_char)
        assert starts == sorted(starts), name

    for path, text in own_files(language, own):
        split(text, Path(path).stem)
    for i in range(generated_count):
        split(generated(language, rng), f"generated_{i}")

    @hypothesis_seed(seed)
    @settings(max_examples=garbage_count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(garbage_strategy(language))
    def garbage(text: str) -> None:
        split(text, "garbage")

    garbage()
    return counts


# -- the parent: a child per grammar, its exit watched ---------------------------------------------


def prepare_children() -> None:
    """Import here, once, what every grammar's child needs: the engine's ``prepare()`` (LlamaIndex's node parsers,
    NLTK's bundled data, tiktoken's encoding, tree-sitter's bindings) and hypothesis. No grammar is loaded and
    nothing is split: each child still parses with grammars it loads itself."""
    import hypothesis.strategies  # noqa: F401

    from core.splitters import SPLITTERS

    SPLITTERS.create("llamaindex.code").prepare()


def run_child(language: str, seed: int, args: argparse.Namespace) -> subprocess.CompletedProcess[str] | None:
    """One grammar's :func:`run_grammar` in a child process: its exit status (a signal's negative), stdout and
    stderr, or None when it ran past ``--seconds`` (it is then killed). Forked from this process where it can
    fork, else a fresh interpreter running ``--child``."""
    if not hasattr(os, "fork"):
        command = [sys.executable, __file__, "--child", f"{language}:{seed}", "--generated", str(args.generated),
                   "--garbage", str(args.garbage), "--keep", str(args.keep), "--own", str(args.own)]  # fmt: skip
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=args.seconds, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # never returns
            _forked_child(language, seed, args, out.fileno(), err.fileno())
        returncode = _wait(pid, args.seconds)
        if returncode is None:
            return None
        out.seek(0)
        err.seek(0)
        text = [stream.read().decode("utf-8", "replace") for stream in (out, err)]
    return subprocess.CompletedProcess([language, str(seed)], returncode, text[0], text[1])


def _forked_child(language: str, seed: int, args: argparse.Namespace, out_fd: int, err_fd: int) -> None:
    """In the forked child: :func:`run_grammar`, its counts printed as JSON on ``out_fd`` (its stdout), a traceback
    on ``err_fd`` (its stderr) and exit status 1 if it raised; leaves without running the parent's exit handlers."""
    status = 1
    try:
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        keep = args.keep / f"{language}-{seed}.json"
        counts = run_grammar(language, args.generated, args.garbage, seed, keep, args.own)
        print(json.dumps(counts))
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _wait(pid: int, seconds: float) -> int | None:
    """The child's exit status as subprocess gives it (minus the signal that killed it), or None when it ran past
    ``seconds``: it is then killed and reaped."""
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.02)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--generated", type=int, default=200, help="generated files per grammar")
    parser.add_argument("--garbage", type=int, default=300, help="hypothesis-drawn texts per grammar")
    parser.add_argument("--own", type=int, default=400, help="the repository's own files per grammar, at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1, help="runs per grammar, seeds seed, seed+1, ...")
    parser.add_argument("--seconds", type=float, default=300, help="a grammar's child is killed after this")
    parser.add_argument("--languages", default="", help="comma-separated grammars (default: all)")
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "code_engine_stress")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        language, seed = args.child.split(":")
        keep = args.keep / f"{language}-{seed}.json"
        counts = run_grammar(language, args.generated, args.garbage, int(seed), keep, args.own)
        print(json.dumps(counts))
        return 0

    from core.engines.llamaindex_code import LANGUAGE_GRAMMARS

    if hasattr(os, "fork"):
        prepare_children()
    languages = args.languages.split(",") if args.languages else list(LANGUAGE_GRAMMARS)
    args.keep.mkdir(parents=True, exist_ok=True)
    totals = {"splits": 0, "refused": 0, "crashed": 0, "stopped": 0, "nodes": 0, "not_exact": 0, "chars": 0}
    problems = []
    hangs = []
    columns = ("splits", "refused", "crashed", "stopped", "nodes", "not_exact", "chars")
    print(f"{'grammar':<11} {'seed':>4} " + " ".join(f"{c:>9}" for c in columns) + f" {'seconds':>7}  outcome")
    blank = " ".join(f"{'':>9}" for _ in columns)
    for language in languages:
        for seed in range(args.seed, args.seed + args.seeds):
            start = time.perf_counter()
            result = run_child(language, seed, args)
            if result is None:
                hangs.append(f"{language}:{seed} ran past {args.seconds:.0f} s (input kept: {language}-{seed}.json)")
                print(f"{language:<11} {seed:>4} {blank} {args.seconds:>7.0f}  HANG")
                continue
            seconds = time.perf_counter() - start
            if result.returncode != 0:
                outcome = f"exit {result.returncode}" if result.returncode > 0 else f"signal {-result.returncode}"
                problems.append(f"{language}:{seed} {outcome}: {result.stderr[-1500:]}")
                print(f"{language:<11} {seed:>4} {blank} {seconds:>7.1f}  {outcome}")
                continue
            counts = json.loads(result.stdout.strip().splitlines()[-1])
            for key in totals:
                totals[key] += counts[key]
            row = " ".join(f"{counts[c]:>9}" for c in columns)
            print(f"{language:<11} {seed:>4} {row} {seconds:>7.1f}  ok", flush=True)
    print(f"{'total':<11} {'':>4} " + " ".join(f"{totals[c]:>9}" for c in columns))
    for line in hangs + problems:
        print(line)
    return 1 if problems or hangs else 0  # a grammar whose child never finished is a failure too


if __name__ == "__main__":
    sys.exit(main())
