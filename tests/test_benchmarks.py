"""The benchmark's method cannot drift back: ChunkScope is timed from the file's text, Document included.

Issue 18: with the ``Document`` built outside the timer, ChunkScope skipped the
hash of the whole text (its id) that its split needs, 20-30% of its time, while
every peer was timed from the plain string. No timing here: the registry is
inspected and each ChunkScope split is called once on a small ``str``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import contestants  # noqa: E402

TEXT = "Chunking keeps a document's text whole.\n\nEvery chunk is a span of it. " * 20


@pytest.mark.parametrize("group", contestants.GROUPS, ids=lambda g: g.key)
def test_chunkscope_is_timed_from_the_str_and_builds_its_document_inside_the_timed_call(group, monkeypatch):
    import core.schema

    assert group.ours.library == "chunkscope"
    assert all(c.library != "chunkscope" for c in group.peers)
    split = group.ours.prepare()  # the untimed set-up
    hashed: list[str] = []
    real_content_id = core.schema.content_id

    def recording_content_id(text: str, *args: object) -> str:
        hashed.append(text)
        return real_content_id(text, *args)

    monkeypatch.setattr(core.schema, "content_id", recording_content_id)
    chunks = split(TEXT)  # what the suite times
    # The Document of this text was made inside the call: its id (a hash of the whole text) is paid there.
    assert hashed == [TEXT]
    assert chunks and all(isinstance(chunk, str) and chunk in TEXT for chunk in chunks)


def test_only_the_floor_is_not_a_peer_and_a_multi_threaded_contestant_says_so():
    for group in contestants.GROUPS:
        assert group.peers, group.key
        assert not group.ours.floor
        assert all(c.threads == 1 for c in group.peers), "every peer runs with TOKENIZERS_PARALLELISM=false"
    token = contestants.group("token")
    assert [c.label for c in token.contestants if c.floor] == [
        "floor: the text tokenized once (encode_batch of its paragraphs)",
        "floor: the text tokenized once (ChunkScope's token index)",
    ]
    from core.tokens.threads import WORKERS

    assert contestants.group("sentence").ours.threads == WORKERS
