"""Document ids in a batch: the text and the file's path inside its root, or the text alone.

Outside batch a document id hashes the file name and the text
(:func:`core.schema.content_id`), which the app and the fingerprints rely on. Over a
corpus that gave two identical files in two folders the same document and node ids.
So batch hashes the text with the file's path inside its input root
(:attr:`core.batch.inputs.Input.name`): unique in the corpus, and unchanged when the
whole corpus moves. ``--content-ids`` hashes the text alone instead, so identical
contents share their ids whatever their names: the ids then say what is duplicated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.schema import Document, content_id


def id_salt(name: str, *, content_ids: bool) -> str:
    """What a task carries for its documents' ids: the input's name, or "" for ids from the text alone."""
    return "" if content_ids else name


def assign_batch_ids(documents: Sequence[Document], salt: Any) -> None:
    """Give each document its batch id (``salt`` None: a task from elsewhere, whose ids stay as loaded)."""
    if salt is None:
        return
    for document in documents:
        document.id = content_id(document.text, salt)
