"""RULE task variants as docs: each a flat list with the full prompt already written, so
one template YAML serves every variant (chosen by ``dataset_kwargs``) and a prompt can
be pinned by a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import datasets

from custom_metrics.common.errors import DataError
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.task_loading import task_loader
from custom_metrics.rule.cache import cached_docs
from custom_metrics.rule.data import (
    SPLITS,
    MainQuestion,
    SubQuestion,
    all_sub_questions,
    demo_sets,
    main_questions,
    sub_questions,
)
from custom_metrics.rule.metrics import ELIMINATIVE, MAIN, SELECTIVE
from custom_metrics.rule.prompts import ALIGNMENT_INSTRUCTION, INSTRUCTION, alignment_block, question_block


def _doc(
    doc_id: str, main_id: str, kind: str, split: int, label: int, none_gold: bool, group_size: int, prompt: str
) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "main_id": main_id,
        "kind": kind,
        "split": split,
        "label": label,
        "none_gold": none_gold,
        "group_size": group_size,
        "prompt": prompt,
    }


def main_doc(main: MainQuestion, group_size: int, prompt: str) -> dict[str, Any]:
    return _doc(main.id, main.id, MAIN, 0, main.label, False, group_size, prompt)


def sub_doc(sub: SubQuestion, group_size: int, prompt: str) -> dict[str, Any]:
    kind = SELECTIVE if sub.selective else ELIMINATIVE
    return _doc(sub.id, sub.main_id, kind, sub.split, sub.label, sub.none_gold, group_size, prompt)


def _by_main(subs: Iterable[SubQuestion]) -> dict[str, list[SubQuestion]]:
    found: dict[str, list[SubQuestion]] = {}
    for sub in sorted(subs, key=lambda s: s.option_index):
        found.setdefault(sub.main_id, []).append(sub)
    return found


def grouped_docs(
    subs: Sequence[SubQuestion],
    *,
    with_main: bool,
    with_subs: bool,
    prefix: str = "",
    context: bool = True,
    skip_mains: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Docs in main-question order, each main question followed by its subquestions.

    Keeping a main question next to its subquestions means a ``--limit`` run cuts at
    most one group short, so consistency stays meaningful on small runs.
    """
    by_main = _by_main(subs)
    docs: list[dict[str, Any]] = []
    for main in main_questions():
        group = by_main.get(main.id, [])
        if with_main and main.id not in skip_mains:
            block = question_block(main.context if context else None, main.question, main.options)
            docs.append(main_doc(main, len(group), prefix + block))
        if with_subs:
            for sub in group:
                block = question_block(sub.context if context else None, sub.question, sub.options)
                docs.append(sub_doc(sub, len(group), prefix + block))
    return docs


def fewshot_docs(split: int, demos: str = "reclor") -> list[dict[str, Any]]:
    """Test split ``split`` with published demonstration set ``split`` (Appendix E).

    All main questions are evaluated in every run (the paper does not split them), except
    ReClor demonstrations, which are main questions shown with their answer; subquestions
    are those of the split. RULE demonstrations are subquestions; every subquestion of the
    split is evaluated, as the paper's Table 3 denominators show (see the task README).
    The test question follows the demonstrations exactly as one demonstration follows another.
    """
    shown = demo_sets(demos)[split - 1]
    return grouped_docs(
        sub_questions(split),
        with_main=True,
        with_subs=True,
        prefix=INSTRUCTION + shown.prompt + " ",
        skip_mains=frozenset(shown.main_ids),
    )


def rationales(subs: Iterable[SubQuestion]) -> dict[str, dict[int, str]]:
    """main id -> option index -> rationale (gold answer of the subquestion about that option).

    A subquestion whose gold answer is "None of the above choices" has no rationale for
    its option: the rationale written for it did not survive validation.
    """
    found: dict[str, dict[int, str]] = {}
    for sub in subs:
        if not sub.none_gold:
            found.setdefault(sub.main_id, {})[sub.option_index] = sub.gold_text
    return found


RATIONALE_SETTINGS = ("none", "selective", "eliminative", "both")


def rationale_docs(setting: str) -> list[dict[str, Any]]:
    """Main questions with rationales appended (Table 5), on one shared subset.

    All four settings use the main questions that have a selective rationale and at least
    one eliminative one, so the rows compare the same questions. Several rationales go on
    one ``Rationale:`` line in option order, so their position does not give away which
    one is selective.
    """
    if setting not in RATIONALE_SETTINGS:
        raise DataError(f"unknown RULE rationale setting {setting!r}; expected one of {RATIONALE_SETTINGS}.")
    known = rationales(all_sub_questions())
    docs: list[dict[str, Any]] = []
    for main in main_questions():
        written = known.get(main.id, {})
        eliminative = [index for index in sorted(written) if index != main.label]
        if main.label not in written or not eliminative:
            continue
        chosen = {
            "none": [],
            "selective": [main.label],
            "eliminative": eliminative,
            "both": sorted([main.label, *eliminative]),
        }[setting]
        text = " ".join(written[index].strip() for index in chosen) if chosen else None
        docs.append(main_doc(main, 0, INSTRUCTION + question_block(main.context, main.question, main.options, text)))
    return docs


def alignment_docs() -> list[dict[str, Any]]:
    """Rationale alignment (Appendix J): one doc per subquestion, its question text replaced
    by the main question and the main option it is about; the four rationales are the
    subquestion's options and the gold is the subquestion's gold."""
    mains = {main.id: main for main in main_questions()}
    docs = []
    for subs in _by_main(all_sub_questions()).values():
        for sub in subs:
            prompt = ALIGNMENT_INSTRUCTION + alignment_block(mains[sub.main_id], sub.option_index, sub.options)
            docs.append(sub_doc(sub, len(subs), prompt))
    return docs


def docs_for(variant: str, split: int | None = None, demos: str = "reclor") -> list[dict[str, Any]]:
    """Docs of one task variant (the ``dataset_kwargs`` of the task YAMLs)."""
    subs = all_sub_questions
    builders: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "combined": lambda: grouped_docs(subs(), with_main=True, with_subs=True, prefix=INSTRUCTION),
        "main": lambda: grouped_docs(subs(), with_main=True, with_subs=False, prefix=INSTRUCTION),
        "sub": lambda: grouped_docs(subs(), with_main=False, with_subs=True, prefix=INSTRUCTION),
        "combined_noctx": lambda: grouped_docs(
            subs(), with_main=True, with_subs=True, prefix=INSTRUCTION, context=False
        ),
        "alignment": alignment_docs,
        **{f"rationale_{s}": (lambda s=s: rationale_docs(s)) for s in RATIONALE_SETTINGS},
    }
    if variant == "fewshot":
        if split not in SPLITS:
            raise DataError(f"RULE five-shot tasks need dataset_kwargs 'split' in {SPLITS}, got {split!r}.")
        return fewshot_docs(split, demos)
    if variant not in builders:
        raise DataError(f"unknown RULE variant {variant!r}; expected one of {sorted([*builders, 'fewshot'])}.")
    return builders[variant]()


@task_loader
def load(variant: str, split: int | None = None, demos: str = "reclor", **run_args: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` hook: the docs of ``variant`` (and ``split`` and ``demos`` for
    five-shot tasks), from the verified cache of built docs when it holds them; the harness
    also passes the run's metadata, which no variant reads but whose keys are checked."""
    check_metadata_keys("RULE", run_args)
    return {"test": cached_docs(variant, split, lambda: docs_for(variant, split, demos), demos)}
