"""The ASCII path of the model tokenizer gives exactly the Rust tokenizer's tokens.

The plain rule: ``tokenizers.Tokenizer.encode`` of the text without special
tokens, its offsets (zero-width tokens dropped) and its count. The path reads
plain ASCII itself and leaves every word with another character, and every
text holding an added token's text, to the Rust tokenizer. It reads words in C
where the extension is built (core/tokens/wordpiece_native.c) and in numpy otherwise:
every rule here holds for both.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hard_words, long_words, prose, unicode_text, whitespace_runs

from core.tokens.token_index import TokenIndex
from core.tokens.tokenizers import ModelTokenizer, default_model_path, get_tokenizer
from core.tokens.wordpiece import AsciiWordPiece, NativeWordPiece
from core.tokens.wordpiece_numpy import NumpyWordPiece

FAST = get_tokenizer("model")
RUST = ModelTokenizer(default_model_path(), ascii_fast_path=False)


def numpy_path() -> ModelTokenizer:
    """A model tokenizer whose ASCII path reads words in numpy (what an install without a C compiler runs)."""
    tokenizer = ModelTokenizer(default_model_path())
    tokenizer._ascii = AsciiWordPiece.for_tokenizer(tokenizer._tokenizer, native=False)
    return tokenizer


NUMPY = numpy_path()
BOTH = pytest.mark.parametrize("fast", [FAST, NUMPY], ids=["C", "numpy"])
FAST_ALL_WORDS = numpy_path()  # made to look up every word, one-character ones too
SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"

# ASCII with its corners: capitals, digits, every punctuation character, tabs and line breaks, the
# control characters BERT deletes (\x00 \x0b \x0c \x1f \x7f), and the special tokens' text.
ascii_soup = st.text(
    alphabet=st.sampled_from(
        list("abcXYZ019 .,;:!?'\"-_()[]{}<>/\\|@#$%^&*+=~`\t\n\r") + ["\x00", "\x0b", "\x0c", "\x1f", "\x7f"]
    ),
    max_size=80,
)
pieces = st.one_of(
    prose(),
    unicode_text(),
    hard_words,
    long_words,
    whitespace_runs,
    ascii_soup,
    st.sampled_from(["[CLS]", "[cls]", "[MASK]x", "unbelievably", "tokenization's", "\ufffd", "naïve", "\u00a0"]),
)
texts = st.lists(pieces, max_size=8).map(" ".join)


def rust_columns(text: str) -> tuple[list[int], list[int]]:
    starts, ends = RUST.span_columns([text])[0]
    return list(starts), list(ends)


def test_the_c_path_is_built_where_the_project_is_installed():
    # The install builds it (setup.py; the Makefile installs gcc): without it every count is slower, not wrong.
    assert isinstance(FAST._ascii.reader, NativeWordPiece)
    assert isinstance(NUMPY._ascii.reader, NumpyWordPiece) and NUMPY._ascii.reader._keys is not None


@BOTH
@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_spans_and_counts_equal_the_rust_tokenizers(fast, text):
    starts, ends = fast.span_columns([text])[0]
    assert (starts.tolist(), ends.tolist()) == rust_columns(text)
    assert fast.count(text) == RUST.count(text)
    assert fast.spans(text) == RUST.spans(text)
    assert all(type(start) is int for start, _ in fast.spans(text))


@BOTH
@settings(max_examples=60, deadline=None)
@given(batch=st.lists(texts, max_size=6))
def test_batches_mix_both_paths_in_order(fast, batch):
    assert fast.count_many(batch) == RUST.count_many(batch)
    assert [(list(s), list(e)) for s, e in fast.span_columns(batch)] == [rust_columns(text) for text in batch]


@BOTH
def test_the_shipped_documents_tokenize_alike(fast):
    texts = [
        path.read_text(encoding="utf-8")
        for path in sorted(SAMPLES.rglob("*"))
        if path.suffix in {".md", ".txt", ".html", ".py", ".csv"}
    ]
    assert len(texts) >= 5
    for text in texts:
        index, rust = TokenIndex(fast, text), TokenIndex(RUST, text)
        assert index.starts == rust.starts and index.ends == rust.ends


@BOTH
def test_words_outside_the_vocabulary_become_the_models_pieces(fast):
    text = "Chunkers unbelievably overlap, don't they?"
    # "chunkers" is "chunk", "##ers"; "unbelievably" "un", "##bel", "##ie", "##va", "##bly".
    assert fast.spans(text) == RUST.spans(text)
    assert fast.count(text) == len(RUST.spans(text)) == 14


def test_what_the_path_leaves_to_the_rust_tokenizer():
    path = FAST._ascii
    assert path.prepare("a [CLS] b") is None  # an added token's text is one token there
    text = ("a naïve café, " + "plain words " * 30) * 2
    mixed = path.prepare(text)
    assert [word for _, word in mixed.others] == ["naïve", "café,"] * 2  # cut at ASCII whitespace
    assert "naïve" not in mixed.read and len(mixed.read) == len(text)  # blanked, every offset kept
    assert path.prepare("日本語のテキスト " * 4) is None  # mostly other characters: the Rust pass whole


def test_only_bert_wordpiece_tokenizers_get_the_path():
    from tokenizers import Tokenizer, models, pre_tokenizers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Whitespace()
    assert AsciiWordPiece.for_tokenizer(bpe) is None
    assert FAST._ascii is not None


@pytest.mark.parametrize("words_kept", [100_000, 7], ids=["one table", "tables renewed while threads read"])
def test_learning_new_words_on_many_threads_gives_each_thread_the_rust_tokens(monkeypatch, words_kept):
    monkeypatch.setattr(NumpyWordPiece, "WORDS_KEPT", words_kept)
    fresh = numpy_path()  # the C path learns nothing: each word is split where it stands
    inputs = [" ".join(f"zq{n}x{k}vorbl{k * n}" for k in range(60)) for n in range(16)]
    expected = [rust_columns(text) for text in inputs]
    results: dict[int, tuple[list[int], list[int]]] = {}
    start = threading.Barrier(4)

    def work(first: int) -> None:
        start.wait()
        for n in range(first, len(inputs), 4):
            s, e = fresh.span_columns([inputs[n]])[0]
            results[n] = (s.tolist(), e.tolist())

    threads = [threading.Thread(target=work, args=(first,)) for first in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[n] for n in range(len(inputs))] == expected


def test_past_its_memory_bound_a_fresh_table_starts_and_the_path_keeps_running(monkeypatch):
    fresh = numpy_path()
    monkeypatch.setattr(NumpyWordPiece, "WORDS_KEPT", 3)
    text = "zqa zqb zqc zqd zqe"
    assert fresh.spans(text) == RUST.spans(text)
    reader = fresh._ascii.reader
    full = reader._table
    assert full.learned() >= 3
    assert fresh._ascii.prepare("more zqf words") is not None  # the fast path still reads it
    assert fresh.spans("more zqf words") == RUST.spans("more zqf words")
    renewed = reader._table
    # Memory back to the vocabulary before the call, which then learned its one new word ("zqf").
    assert renewed is not full and renewed.learned() == 1
    assert len(renewed.keyed) + len(renewed.known) == renewed.vocabulary + 1
    assert fresh.spans(text) == RUST.spans(text)


@BOTH
@pytest.mark.parametrize("text", ["", " ", "\n\t", "a", "A.", "x" * 101, "[UNK]"])
def test_edges(fast, text):
    assert fast.spans(text) == RUST.spans(text)
    assert fast.count(text) == RUST.count(text)


def test_a_new_word_met_many_times_is_split_once():
    # Words of up to WordKeys.longest (12) characters are split by key (_pieces), longer ones by the model.
    fresh = numpy_path()
    path, asked = fresh._ascii.reader, []
    tokenize, pieces = path._tokenize, path._pieces
    path._tokenize = lambda word: asked.append(word) or tokenize(word)
    path._pieces = lambda keys: asked.extend(keys.tolist()) or pieces(keys)
    long = "zqvorblatqxzzypfoo"
    text = f"zqvorblat zqvorblat, zqvorblat! qxzzyp zqvorblat qxzzyp {long} {long}. " * 20
    assert fresh.spans(text) == RUST.spans(text)
    keys = [path._keys.key(word) for word in ("zqvorblat", "qxzzyp")]
    assert path._keys.key(long) is None
    assert sorted(asked, key=str) == sorted([*keys, long], key=str)
    assert fresh.spans(text) == RUST.spans(text) and len(asked) == 3  # learned: not asked again


@settings(max_examples=100, deadline=None)
@given(texts)
def test_looking_up_every_word_gives_the_same_tokens_as_skipping_single_characters(text):
    # The vocabulary here holds every single character, so one-character words are not looked up; a
    # vocabulary without them has every word looked up, and the tokens are the same.
    assert NUMPY._ascii.reader._singles_known
    FAST_ALL_WORDS._ascii.reader._singles_known = False
    starts, ends = FAST_ALL_WORDS.span_columns([text])[0]
    assert (starts.tolist(), ends.tolist()) == rust_columns(text)
    assert FAST_ALL_WORDS.count(text) == RUST.count(text)


@BOTH
def test_a_long_text_read_in_long_blocks_gives_the_rust_tokenizers_index(fast):
    # Over 64 KB of mostly ASCII text: the index reads it in 64 KB blocks (TokenIndex.ASCII_BLOCK), one of
    # them holding an added token's text (that block goes to the Rust tokenizer whole) and a few accents.
    words = [f"zq{n % 997}vorbl" if n % 7 else "plain" for n in range(40_000)]
    words[20_000] = "[CLS]"
    words[30_000] = "naïve"
    text = " ".join(words)
    assert len(text) > 3 * TokenIndex.ASCII_BLOCK and not fast.parallel_for(text)
    index, rust = TokenIndex(fast, text), TokenIndex(RUST, text)
    assert index.starts == rust.starts and index.ends == rust.ends


@BOTH
@pytest.mark.parametrize("length", [99, 100, 101])
def test_the_longest_words_pieces_keep_their_offsets(fast, length):
    # Pieces' offsets within a word are kept a byte each: a word has at most max_input_chars_per_word (100)
    # characters, or is one unknown token.
    word = ("zqxvorbl" * 13)[:length]
    text = f"a {word} b {word}"
    assert fast.spans(text) == RUST.spans(text)
    assert fast.count(text) == RUST.count(text)


# Words of letters and digits up to WordKeys.longest characters: random ones, and ones glued from pieces of
# the vocabulary (so that words of several pieces, and the longest-match choices between them, are common).
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_PARTS = ["un", "believ", "ably", "chunk", "ers", "token", "ization", "zq", "vorbl", "3f", "a9", "x", "qu", "ing"]
keyable_words = st.one_of(
    st.text(alphabet=_ALPHABET, min_size=1, max_size=12),
    st.lists(st.sampled_from(_PARTS), min_size=1, max_size=4).map("".join).filter(lambda w: len(w) <= 12),
    st.text(alphabet="0123456789abcdef", min_size=6, max_size=12),  # hashes: many short pieces
)


def key_by_rule(word: str, keys) -> int:
    """A word's key as WordKeys documents it: its digits (places in the alphabet, from 1), left-aligned."""
    digits = [_ALPHABET.index(c) + 1 for c in word] + [0] * (keys.longest - len(word))
    number = 0
    for digit in digits:
        number = number * keys.base + digit
    return number


@settings(max_examples=200, deadline=None)
@given(st.lists(keyable_words, min_size=1, max_size=30))
def test_word_keys_are_exact_numbers_one_per_word(words):
    from core.tokens.wordpiece_numpy import _codes, _words_at

    keys = NUMPY._ascii.reader._keys
    assert (keys.base, keys.longest) == (37, 12)  # 37**12 < 2**64 <= 37**13
    text = " ".join(words) + "."
    codes = _codes(text)
    starts, ends = _words_at(codes)
    found = keys.of(codes, starts[:-1], (ends - starts)[:-1])  # the words, not the full stop
    assert found.dtype.name == "uint64"
    assert found.tolist() == [key_by_rule(word, keys) for word in words] == [keys.key(word) for word in words]
    assert len(set(found.tolist())) == len(set(words))  # equal keys exactly for equal words
    digits, lengths = keys.spelled(found)
    spelled = ["".join(_ALPHABET[d - 1] for d in row[:n]) for row, n in zip(digits.tolist(), lengths.tolist(), strict=True)]
    assert spelled == words


def model_pieces(tokenizer, word: str) -> list[tuple[int, int]]:
    return [token.offsets for token in tokenizer.model.tokenize(word)]


@settings(max_examples=300, deadline=None)
@given(st.lists(keyable_words, min_size=1, max_size=40, unique=True))
def test_words_split_by_key_are_the_models_wordpiece(words):
    # The plain rule: the model's own WordPiece of each word (tokenizers' Model.tokenize), its pieces' offsets.
    path = NUMPY._ascii.reader
    counts, starts, ends = path._pieces(np.array([path._keys.key(word) for word in words], dtype=np.uint64))
    pieces = list(zip(starts.tolist(), ends.tolist(), strict=True))
    expected = [model_pieces(path_tokenizer(), word) for word in words]
    assert counts.tolist() == [len(p) for p in expected]
    assert pieces == [piece for p in expected if len(p) > 1 for piece in p]


@cache
def path_tokenizer():
    """The packaged model's Rust tokenizer, read from its file once (reading it takes ~0.1 s; its WordPiece keeps
    no state between calls)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))


def test_corpus_words_split_by_key_are_the_models_wordpiece():
    # Every distinct word of letters and digits (2 to 12 characters) of the shipped documents, lowercased.
    import re

    text = " ".join(path.read_text(encoding="utf-8", errors="replace") for path in sorted(SAMPLES.rglob("*.*")))
    words = sorted(set(re.findall(r"[a-z0-9]{2,12}", text.lower())) | {"zqvorblat", "3fa9c0d1e2b4", "tokenization"})
    assert len(words) > 1000
    path, tokenizer = NUMPY._ascii.reader, path_tokenizer()
    counts, starts, ends = path._pieces(np.array([path._keys.key(word) for word in words], dtype=np.uint64))
    expected = [model_pieces(tokenizer, word) for word in words]
    assert counts.tolist() == [len(p) for p in expected]
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [x for p in expected if len(p) > 1 for x in p]


def small_bert(vocabulary: list[str]):
    """A BERT tokenizer (normalizer, pre-tokenizer, WordPiece) over ``vocabulary``, with [UNK] first."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tokenizer = Tokenizer(
        models.WordPiece({word: i for i, word in enumerate(["[UNK]", *vocabulary])}, unk_token="[UNK]")
    )
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer


# Every character alone starts a word, but only a few continue one: words that need another are unknown.
SINGLES = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
SMALL = small_bert([*SINGLES, "ab", "abc", "zq", "vorbl", "##a", "##b", "##bc", "##vorbl", "##q", "##zq", "##12"])
# Some single characters missing too: a word starting with one (or a lone "?") is unknown.
SPARSE = small_bert([c for c in SINGLES if c not in "q1?"] + ["ab", "zq", "##a", "##q", "##1"])


@pytest.mark.parametrize("native", [True, False], ids=["C", "numpy"])
@pytest.mark.parametrize("bert", [SMALL, SPARSE], ids=["every single character", "some missing"])
@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.one_of(keyable_words, st.text(alphabet="abcqz12? ", max_size=20), long_words), max_size=12))
def test_unknown_words_and_long_words_are_the_tokenizers_own(native, bert, words):
    # A vocabulary where most continuations are missing (a word needing one is [UNK], a single token over the
    # whole word) and words longer than the keys' 12 characters (split by the model, by their text).
    path = AsciiWordPiece.for_tokenizer(bert, native=native)
    assert isinstance(path.reader, NativeWordPiece if native else NumpyWordPiece)
    assert native or path.reader._singles_known == (bert is SMALL)
    text = " ".join(words)
    encoding = bert.encode(text, add_special_tokens=False)
    starts, ends = path.columns(path.prepare(text), [])
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [o for o in encoding.offsets if o[1] > o[0]]
    assert path.count(path.prepare(text), []) == len(encoding.ids)


def other_words_by_rule(text: str) -> list[tuple[int, str]]:
    """The plain rule: each maximal run of characters other than ASCII whitespace (space, tab, line feed,
    carriage return) that holds a character outside printable ASCII, tab, line feed and carriage return."""
    import re

    return [
        (match.start(), match.group())
        for match in re.finditer(r"[^ \t\n\r]+", text)
        if re.search(r"[^\t\n\r -~]", match.group())
    ]


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, st.text(max_size=60), st.sampled_from(["\ud800 x", "a\x0bb c\x7f", "naïve  café\t\r\n"])))
def test_the_words_left_to_the_rust_tokenizer_follow_their_rule(text):
    from core.tokens.wordpiece import _other_words

    assert _other_words(text) == other_words_by_rule(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["[CLS]", "[cls]", "[MASK]x", "[UNK", "SEP]", "[[PAD]]", "[", "a b", "\n"]), max_size=8))
def test_an_added_tokens_text_is_found_wherever_it_is(parts):
    # The plain rule: any added token's text (as it is matched: [CLS], not [cls]) in the text.
    text = "".join(parts)
    path = FAST._ascii
    assert bool(path._find_added(text)) == any(added in text for added in path._added)
    assert (path.prepare(text) is None) == any(added in text for added in path._added)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_the_c_path_reads_any_bytes_within_bounds(data):
    # Python hands it prepared text only, but it is C on document text: any bytes (past ASCII, NUL, control
    # characters: whitespace by its byte classes) give tokens in order, disjoint, inside the text, non-empty.
    native = FAST._ascii.reader.vocabulary
    starts, ends = np.full(len(data), -1, dtype=np.int64), np.full(len(data), -1, dtype=np.int64)
    count = native.columns(data, starts, ends)
    assert count == native.count(data) <= len(data)
    starts, ends = starts[:count], ends[:count]
    assert ((0 <= starts) & (starts < ends) & (ends <= len(data))).all()
    assert (starts[1:] >= ends[:-1]).all()


def test_the_c_path_refuses_outputs_too_small_for_its_text():
    native = FAST._ascii.reader.vocabulary
    small = np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="every byte"):
        native.columns(b"four words right here", small, np.zeros(100, dtype=np.int64))
    with pytest.raises(TypeError):
        native.columns(b"text", np.zeros(8, dtype=np.int64).tobytes(), np.zeros(8, dtype=np.int64))  # read-only
