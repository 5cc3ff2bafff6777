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
from custom_metrics.common.sources import to_dataset
from custom_metrics.common.task_loading import task_loader
from custom_metrics.rule import zeroshot_cot
from custom_metrics.rule.bias import ALWAYS0, BIAS_DEMOS, BIASES, bias_target, biased_question, shown_demonstrations
from custom_metrics.rule.cache import cached_docs
from custom_metrics.rule.data import (
    COT_DEMOS,
    SPLITS,
    DemoSet,
    MainQuestion,
    SubQuestion,
    all_sub_questions,
    demo_sets,
    main_questions,
    sub_questions,
)
from custom_metrics.rule.metrics import ELIMINATIVE, MAIN, SELECTIVE
from custom_metrics.rule.prompts import (
    ALIGNMENT_INSTRUCTION,
    ANSWER,
    COT_ANSWER,
    INSTRUCTION,
    ZEROSHOT_COT_ANSWER,
    ahead_of_question,
    alignment_block,
    demonstration,
    demonstrations,
    question_block,
)


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
    answer: str = ANSWER,
) -> list[dict[str, Any]]:
    """Docs in main-question order, each main question followed by its subquestions, so a
    ``--limit`` run cuts at most one group short and consistency stays meaningful."""
    by_main = _by_main(subs)
    docs: list[dict[str, Any]] = []
    for main in main_questions():
        group = by_main.get(main.id, [])
        if with_main and main.id not in skip_mains:
            block = question_block(main.context if context else None, main.question, main.options, answer=answer)
            docs.append(main_doc(main, len(group), prefix + block))
        if with_subs:
            for sub in group:
                block = question_block(sub.context if context else None, sub.question, sub.options, answer=answer)
                docs.append(sub_doc(sub, len(group), prefix + block))
    return docs


def fewshot_prefix(shown: DemoSet, context: bool = True) -> str:
    """The instruction and a published prompt, ready for the test question; without context,
    the demonstrations rebuilt from their fields in the context-free layout (Appendix M)."""
    if context:
        return INSTRUCTION + ahead_of_question(shown.prompt)
    shots = zip(shown.questions, shown.options, shown.labels)
    return INSTRUCTION + ahead_of_question(demonstrations([demonstration(None, q, o, label) for q, o, label in shots]))


def fewshot_docs(split: int, demos: str = "reclor", shots: int = 5) -> list[dict[str, Any]]:
    """Test split ``split`` with published demonstration set ``split`` (Appendix E): every main
    question but those the demonstrations show, and every subquestion of the split (as Table
    3's denominators show; the task's DETAILS.md), each laid out as a demonstration is."""
    shown = demo_sets(demos, shots)[split - 1]
    return grouped_docs(
        sub_questions(split),
        with_main=True,
        with_subs=True,
        prefix=fewshot_prefix(shown),
        skip_mains=frozenset(shown.main_ids),
        answer=COT_ANSWER if demos in COT_DEMOS else ANSWER,
    )


def biased_docs(bias: str, split: int, demos: str) -> list[dict[str, Any]]:
    """The unbiased five-shot task's main questions of ``split``, in its order and under its ids,
    under ``bias`` (``bias.py``), each doc with its ``bias`` and ``bias_target``."""
    if demos not in BIAS_DEMOS:
        raise DataError(f"RULE biased tasks take demonstrations {BIAS_DEMOS}, not {demos!r}.")
    shown = demo_sets(demos)[split - 1]
    prefix = INSTRUCTION + ahead_of_question(shown_demonstrations(shown, True) if bias == ALWAYS0 else shown.prompt)
    answer = COT_ANSWER if demos in COT_DEMOS else ANSWER
    return [
        {**main_doc(main, 0, prefix + biased_question(bias, main, target, answer)), "bias": bias, "bias_target": target}
        for main in main_questions()
        if main.id not in shown.main_ids
        for target in [bias_target(bias, main)]
    ]


def _each_prompt(index: int, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Docs of one of five prompts in a task that asks every question under all five: the
    doc id names the prompt (``train_1@2``), so ids stay unique and pair across runs."""
    return [{**doc, "doc_id": f"{doc['doc_id']}@{index}"} for doc in docs]


def fewshot_noctx_docs() -> list[dict[str, Any]]:
    """Table 9's five-shot row: the five-shot-on-ReClor runs with every context removed, the
    demonstrations' too, all five runs in one task (main questions once per run)."""
    docs: list[dict[str, Any]] = []
    for shown in demo_sets("reclor"):
        run = grouped_docs(
            sub_questions(shown.index),
            with_main=True,
            with_subs=True,
            prefix=fewshot_prefix(shown, context=False),
            context=False,
            skip_mains=frozenset(shown.main_ids),
        )
        docs += _each_prompt(shown.index, run)
    return docs


def rationales(subs: Iterable[SubQuestion]) -> dict[str, dict[int, str]]:
    """main id -> option index -> rationale (gold answer of the subquestion about that option;
    none where that is "None of the above choices": its rationale did not survive validation)."""
    found: dict[str, dict[int, str]] = {}
    for sub in subs:
        if not sub.none_gold:
            found.setdefault(sub.main_id, {})[sub.option_index] = sub.gold_text
    return found


RATIONALE_SETTINGS = ("none", "selective", "eliminative", "both")


def rationale_line(main: MainQuestion, written: dict[int, str], setting: str) -> str | None:
    """The ``Rationale:`` text of one main question in a Table 5 setting (None: no line), in option
    order, so their position does not give away which one is selective."""
    eliminative = [index for index in sorted(written) if index != main.label]
    chosen = {
        "none": [],
        "selective": [main.label] if main.label in written else [],
        "eliminative": eliminative,
        "both": sorted([main.label, *eliminative]) if main.label in written else eliminative,
    }[setting]
    return " ".join(written[index].strip() for index in chosen) if chosen else None


def _rationale_subset(known: dict[str, dict[int, str]]) -> list[MainQuestion]:
    """The main questions with a selective rationale and at least one eliminative one: the
    shared subset of Table 5's four settings, so the rows compare the same questions."""
    return [
        main
        for main in main_questions()
        if main.label in known.get(main.id, {}) and any(index != main.label for index in known[main.id])
    ]


def _check_rationale_setting(setting: str) -> None:
    if setting not in RATIONALE_SETTINGS:
        raise DataError(f"unknown RULE rationale setting {setting!r}; expected one of {RATIONALE_SETTINGS}.")


def rationale_docs(setting: str) -> list[dict[str, Any]]:
    """Main questions with rationales appended (Table 5), zero-shot, on the shared subset."""
    _check_rationale_setting(setting)
    known = rationales(all_sub_questions())
    return [
        main_doc(main, 0, INSTRUCTION + question_block(main.context, main.question, main.options, text))
        for main in _rationale_subset(known)
        for text in [rationale_line(main, known[main.id], setting)]
    ]


def fewshot_rationale_docs(setting: str) -> list[dict[str, Any]]:
    """Table 5 as the paper ran it, five-shot: under each published ReClor demonstration set, its
    demonstrations carrying the test question's kind of rationale, the shared subset less the
    main questions it demonstrates (so the pooled accuracy weights the five prompts by size)."""
    _check_rationale_setting(setting)
    known = rationales(all_sub_questions())
    mains = {main.id: main for main in main_questions()}
    subset = _rationale_subset(known)
    docs: list[dict[str, Any]] = []
    for shown in demo_sets("reclor"):
        fields = zip(shown.links, shown.contexts, shown.questions, shown.options, shown.labels)
        shots = [
            demonstration(c, q, o, label, main_id and rationale_line(mains[main_id], known.get(main_id, {}), setting))
            for main_id, c, q, o, label in fields
        ]
        prefix = INSTRUCTION + ahead_of_question(demonstrations(shots))
        run = [
            main_doc(main, 0, prefix + question_block(main.context, main.question, main.options, text))
            for main in subset
            if main.id not in shown.main_ids
            for text in [rationale_line(main, known[main.id], setting)]
        ]
        docs += _each_prompt(shown.index, run)
    return docs


def _alignment_items() -> list[tuple[MainQuestion, SubQuestion, int]]:
    """(main question, subquestion, group size) of every alignment item, in main-question order."""
    mains = {main.id: main for main in main_questions()}
    return [(mains[sub.main_id], sub, len(subs)) for subs in _by_main(all_sub_questions()).values() for sub in subs]


def alignment_docs(instruction: bool = True) -> list[dict[str, Any]]:
    """Rationale alignment (Appendix J), zero-shot: one doc per subquestion, asked about the main
    question and option it concerns; Table 7 reports it with and without the instruction."""
    lead = ALIGNMENT_INSTRUCTION if instruction else ""
    return [
        sub_doc(sub, size, lead + alignment_block(main, sub.option_index, sub.options))
        for main, sub, size in _alignment_items()
    ]


ALIGNMENT_EXEMPLARS = (2, 3)  # Appendix J: per prompt, two correct-option and three incorrect-option exemplars


def alignment_exemplars(shown: DemoSet) -> list[str]:
    """The five solved alignment items of prompt ``shown.index``: the first two about a correct
    option and three about an incorrect one among its demonstrated main questions' subquestions
    (none with a "None of the above choices" gold). Figure 12's own exemplars are only an image."""
    mains = {main.id: main for main in main_questions()}
    by_main = _by_main(all_sub_questions())
    candidates = [sub for main_id in shown.main_ids for sub in by_main.get(main_id, []) if not sub.none_gold]
    correct, incorrect = ALIGNMENT_EXEMPLARS
    chosen = [s for s in candidates if s.selective][:correct] + [s for s in candidates if not s.selective][:incorrect]
    if len(chosen) != correct + incorrect:
        raise DataError(
            f"RULE demonstration set {shown.index}: its main questions have too few subquestions for "
            f"{correct} correct-option and {incorrect} incorrect-option alignment exemplars."
        )
    chosen.sort(key=candidates.index)
    return [f"{alignment_block(mains[sub.main_id], sub.option_index, sub.options)}{sub.label}" for sub in chosen]


def fewshot_alignment_docs(instruction: bool = True) -> list[dict[str, Any]]:
    """Table 7 as the paper ran it: five-shot, every item under each of five prompts (one per
    ReClor demonstration set), the exemplars' own items too, as the paper's counts show (2,218
    incorrect options of 2,218): the pooled accuracy is the mean over the prompts."""
    lead = ALIGNMENT_INSTRUCTION if instruction else ""
    items = _alignment_items()
    docs: list[dict[str, Any]] = []
    for shown in demo_sets("reclor"):
        prefix = lead + ahead_of_question(demonstrations(alignment_exemplars(shown)))
        run = [
            sub_doc(sub, size, prefix + alignment_block(main, sub.option_index, sub.options))
            for main, sub, size in items
        ]
        docs += _each_prompt(shown.index, run)
    return docs


def docs_for(variant: str, split: int | None = None, demos: str = "reclor", shots: int = 5) -> list[dict[str, Any]]:
    """Docs of one task variant (the ``dataset_kwargs`` of the task YAMLs)."""
    subs = all_sub_questions
    builders: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "combined": lambda: grouped_docs(subs(), with_main=True, with_subs=True, prefix=INSTRUCTION),
        "main": lambda: grouped_docs(subs(), with_main=True, with_subs=False, prefix=INSTRUCTION),
        "sub": lambda: grouped_docs(subs(), with_main=False, with_subs=True, prefix=INSTRUCTION),
        "combined_noctx": lambda: grouped_docs(
            subs(), with_main=True, with_subs=True, prefix=INSTRUCTION, context=False
        ),
        "zeroshot_cot_reasoning": lambda: grouped_docs(
            subs(), with_main=True, with_subs=True, prefix=INSTRUCTION, answer=ZEROSHOT_COT_ANSWER
        ),
        "alignment": alignment_docs,
        "alignment_noinstr": lambda: alignment_docs(instruction=False),
        "fewshot_noctx": fewshot_noctx_docs,
        "fewshot_alignment": fewshot_alignment_docs,
        "fewshot_alignment_noinstr": lambda: fewshot_alignment_docs(instruction=False),
        **{f"rationale_{s}": (lambda s=s: rationale_docs(s)) for s in RATIONALE_SETTINGS},
        **{f"fewshot_rationale_{s}": (lambda s=s: fewshot_rationale_docs(s)) for s in RATIONALE_SETTINGS},
    }
    biased = {f"fewshot_{bias}": bias for bias in BIASES}
    if variant == "fewshot" or variant in biased:
        if split not in SPLITS:
            raise DataError(f"RULE few-shot tasks need dataset_kwargs 'split' in {SPLITS}, got {split!r}.")
        return biased_docs(biased[variant], split, demos) if variant in biased else fewshot_docs(split, demos, shots)
    if variant not in builders:
        expected = sorted([*builders, "fewshot", *biased])
        raise DataError(f"unknown RULE variant {variant!r}; expected one of {expected}.")
    return builders[variant]()


@task_loader
def load(
    variant: str,
    split: int | None = None,
    demos: str = "reclor",
    shots: int = 5,
    explanations: str | None = None,
    **run_args: Any,
) -> dict[str, datasets.Dataset]:
    """``custom_dataset`` hook: the docs of ``variant``, from the verified cache when it holds them;
    ``zeroshot_cot`` continues the reasoning docs with the run ``explanations`` names."""
    check_metadata_keys("RULE", run_args)
    if variant == "zeroshot_cot":
        return {"test": to_dataset(zeroshot_cot.answer_docs(docs_for("zeroshot_cot_reasoning"), explanations))}
    return {"test": cached_docs(variant, split, lambda: docs_for(variant, split, demos, shots), demos, shots)}
