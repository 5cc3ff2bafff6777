"""RULE task docs and scoring: the authors' prompt format, the paper's variants, Table 2 metrics.

Each task variant is a list of flat docs with the full prompt already written, so one
template YAML serves every variant and a prompt can be pinned by a test. The prompt
layout is the one of the published prompt file: ``Context: ... \\n Question: ... \\n
Option0: ...`` up to ``Option3``, then ``Answer: The answer is Option`` followed by the
scored choice ``0``-``3``. Option texts are used verbatim (trailing spaces included), as
in the published demonstrations.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import datasets

from custom_metrics.classification import predicted_index
from custom_metrics.data import DataError, to_dataset
from custom_metrics.rule_data import (
    MainQuestion,
    SubQuestion,
    SPLITS,
    all_sub_questions,
    demo_sets,
    main_questions,
    sub_questions,
)
from custom_metrics.rule_metrics import (
    ELIMINATIVE,
    MAIN,
    SELECTIVE,
    TABLE2_METRICS,
    Outcome,
    eliminative_acc,
    selective_acc,
)

# prompts.json "0shot" / "vanilla" (a full-data test checks it is verbatim).
INSTRUCTION = (
    "In this task, you are expected to answer the multiple-choice question about the given "
    "context. The question has only one correct answer. \n"
)
# Appendix J's prompt is only shown as a figure; this instruction is ours (see README).
ALIGNMENT_INSTRUCTION = (
    "In this task, you are expected to select the rationale that explains why the given "
    "option is a correct or an incorrect answer to the multiple-choice question about the "
    "given context. Only one rationale is about the given option. \n"
)
CHOICES = ["0", "1", "2", "3"]
LINE = " \n "


def question_block(context: str | None, question: str, options: Sequence[str], rationale: str | None = None) -> str:
    """One question in the prompt-file layout, ending where the option digit is scored."""
    lines = [] if context is None else [f"Context: {context}"]
    lines.append(f"Question: {question}")
    lines += [f"Option{i}: {option}" for i, option in enumerate(options)]
    if rationale is not None:
        lines.append(f"Rationale: {rationale}")
    lines.append("Answer: The answer is Option")
    return LINE.join(lines)


def demonstration(context: str, question: str, options: Sequence[str], label: int) -> str:
    """A solved question as it appears in the published five-shot prompts."""
    return f"{question_block(context, question, options)}{label}"


def alignment_block(main: MainQuestion, option_index: int, rationales: Sequence[str]) -> str:
    lines = [f"Context: {main.context}", f"Question: {main.question}", f"Option: {main.options[option_index]}"]
    lines += [f"Rationale{i}: {rationale}" for i, rationale in enumerate(rationales)]
    lines.append("Answer: The answer is Rationale")
    return LINE.join(lines)


def _doc(doc_id: str, main_id: str, kind: str, split: int, label: int, none_gold: bool, group_size: int, prompt: str) -> dict[str, Any]:
    return {
        "doc_id": doc_id, "main_id": main_id, "kind": kind, "split": split, "label": label,
        "none_gold": none_gold, "group_size": group_size, "prompt": prompt,
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


def fewshot_docs(split: int) -> list[dict[str, Any]]:
    """Test split ``split`` with published demonstration set ``split`` (Appendix E).

    All main questions are evaluated in every run (the paper does not split them), except
    the five shown as demonstrations; subquestions are those of the split. The test
    question follows the demonstrations exactly as one demonstration follows another.
    """
    demos = demo_sets()[split - 1]
    return grouped_docs(
        sub_questions(split), with_main=True, with_subs=True,
        prefix=INSTRUCTION + demos.prompt + " ", skip_mains=frozenset(demos.main_ids),
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


def docs_for(variant: str, split: int | None = None) -> list[dict[str, Any]]:
    """Docs of one task variant (the ``rule_variant`` metadata of the task YAMLs)."""
    subs = all_sub_questions
    builders: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "combined": lambda: grouped_docs(subs(), with_main=True, with_subs=True, prefix=INSTRUCTION),
        "main": lambda: grouped_docs(subs(), with_main=True, with_subs=False, prefix=INSTRUCTION),
        "sub": lambda: grouped_docs(subs(), with_main=False, with_subs=True, prefix=INSTRUCTION),
        "combined_noctx": lambda: grouped_docs(subs(), with_main=True, with_subs=True, prefix=INSTRUCTION, context=False),
        "alignment": alignment_docs,
        **{f"rationale_{s}": (lambda s=s: rationale_docs(s)) for s in RATIONALE_SETTINGS},
    }
    if variant == "fewshot":
        if split not in SPLITS:
            raise DataError(f"RULE five-shot tasks need rule_split in {SPLITS}, got {split!r}.")
        return fewshot_docs(split)
    if variant not in builders:
        raise DataError(f"unknown RULE variant {variant!r}; expected one of {sorted([*builders, 'fewshot'])}.")
    return builders[variant]()


def load(rule_variant: str, rule_split: int | str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` hook; ``--metadata`` may pass the split as a string."""
    split = int(rule_split) if rule_split is not None and str(rule_split).isdigit() else rule_split
    return {"test": to_dataset(docs_for(rule_variant, split))}


def outcome(doc: dict[str, Any], results: Sequence[tuple[float, bool]]) -> Outcome:
    correct = predicted_index(results) == doc["label"]
    return Outcome(doc["doc_id"], doc["main_id"], doc["kind"], doc["split"], correct, doc["none_gold"], doc["group_size"])


COMBINED_METRICS = tuple(TABLE2_METRICS)
MAIN_METRICS = ("mainq_acc",)
SUB_METRICS = ("subq_acc", "selective_acc", "eliminative_acc", "mainq_wise_subq_acc", "none_acc")
ALIGNMENT_METRICS = ("correct_option_acc", "incorrect_option_acc")


def _scorer(metrics: Sequence[str]) -> Callable[[dict[str, Any], Sequence[tuple[float, bool]]], dict[str, Outcome]]:
    # lm-eval averages any returned key its YAML does not list, so each task type returns
    # exactly its own metrics.
    def process(doc: dict[str, Any], results: Sequence[tuple[float, bool]]) -> dict[str, Outcome]:
        value = outcome(doc, results)
        return {metric: value for metric in metrics}

    return process


process_combined = _scorer(COMBINED_METRICS)
process_main = _scorer(MAIN_METRICS)
process_sub = _scorer(SUB_METRICS)
process_alignment = _scorer(ALIGNMENT_METRICS)

# Appendix J reports the alignment accuracy for correct and incorrect main options: the
# docs built from selective and eliminative subquestions respectively.
correct_option_acc = selective_acc
incorrect_option_acc = eliminative_acc

