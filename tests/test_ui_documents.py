"""How the pages gather documents when a file's chosen loader options fail."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.config import PipelineConfig
from core.errors import LoadError, WorkTimeoutError
from ui import documents


@dataclass
class _Source:
    file_name: str


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every load the page asks for (its options), with the session holding one PDF."""
    seen: list[dict] = []
    failures: dict[str, str] = {}
    monkeypatch.setattr(documents.state, "sources", lambda: [_Source("report.pdf")])
    monkeypatch.setattr(documents.state, "record_failure", failures.__setitem__)
    seen.append(failures)  # seen[0]: what Home would show beside the file
    return seen


def _config_with_ocr() -> PipelineConfig:
    return PipelineConfig.from_dict({"loaders": {"pdf": {"ocr": "all"}}})


def test_a_failure_with_chosen_options_is_retried_with_the_defaults(monkeypatch, calls) -> None:
    def load(source, options):
        calls.append(options)
        if options:
            raise LoadError(source.file_name, "OCR failed")
        return []

    monkeypatch.setattr(documents.cache, "load_source", load)
    documents.all_documents(_config_with_ocr())
    assert calls[1:] == [{"ocr": "all"}, {}]
    assert "OCR failed" in calls[0]["report.pdf"]


def test_a_load_stopped_at_its_deadline_is_not_run_again(monkeypatch, calls) -> None:
    def load(source, options):
        calls.append(options)
        raise WorkTimeoutError(source.file_name, "loading took longer than the 120 s limit")

    monkeypatch.setattr(documents.cache, "load_source", load)
    assert documents.all_documents(_config_with_ocr()) == []
    assert calls[1:] == [{"ocr": "all"}]  # one wait, not two
    assert "120 s" in calls[0]["report.pdf"]


def test_a_failure_with_the_defaults_is_not_repeated(monkeypatch, calls) -> None:
    def load(source, options):
        calls.append(options)
        raise LoadError(source.file_name, "damaged")

    monkeypatch.setattr(documents.cache, "load_source", load)
    assert documents.all_documents(PipelineConfig()) == []
    assert calls[1:] == [{}]
