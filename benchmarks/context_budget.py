"""The recommended configuration at several context budgets, untuned, over every question of the held-out sets.

    .venv/bin/python benchmarks/context_budget.py 0,4000,5500 main paraphrased readmes reference_code pdf_office_html

Each set's documents are fetched (and checked) as ``benchmarks/tune_heldout.py`` fetches them; ``main`` is its 44
questions, ``paraphrased`` its 23, any other name a set of ``benchmarks/heldout/``. Prints, per set and budget,
hit@5, MRR and the context tokens per query (``chunkscope evaluate``'s numbers; the packaged model, hybrid α 0.5,
k 5, parents returned within the budget: ``RetrievalSettings.context_budget``, 0 for none).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tune_heldout  # noqa: E402

from core.cli.corpus import load_paths
from core.config import PipelineConfig  # noqa: E402
from core.config_parts import RetrievalSettings  # noqa: E402
from core.documents import prepare_documents  # noqa: E402
from core.embed.embedder import get_embedder  # noqa: E402
from core.evaluation.evaluate import evaluate
from core.evaluation.queries import load_queries
from core.evaluation.tune_space import recommended_splitter  # noqa: E402


def question_set(name: str) -> tuple[list[Path], Path]:
    if name == "main":
        return tune_heldout.fetch(True, tune_heldout.QUESTIONS), tune_heldout.QUESTIONS
    if name == "paraphrased":
        questions = tune_heldout.ROOT / "benchmarks" / "tune_heldout_paraphrased.json"
        return tune_heldout.fetch(True, questions), questions
    return tune_heldout.fetch_set(name)


def main(argv: list[str]) -> None:
    budgets = [int(budget) for budget in argv[0].split(",")]
    embedder = get_embedder()
    print("| set | budget | hit@5 | MRR | context tokens |\n|---|---|---|---|---|")
    for name in argv[1:]:
        paths, questions = question_set(name)
        documents = prepare_documents(load_paths([str(path) for path in paths]), PipelineConfig())
        queries = load_queries(str(questions))
        for budget in budgets:
            result = evaluate(
                documents,
                queries,
                recommended_splitter(),
                embedder=embedder,
                retrieval=RetrievalSettings(context_budget=budget),
                context_tokens=True,
            )
            row = result.to_row()
            print(f"| {name} | {budget:,} | {row['hit_rate']:.3f} | {row['mrr']:.3f} | {result.context_tokens:,.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["0,5500", "main"])
