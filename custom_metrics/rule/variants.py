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


def _doc(question: MainQuestion | SubQuestion, group_size: int, prompt: str) -> dict[str, Any]:
    """One question as a doc; a main question is of split 0 and has no "None of the above" gold."""
    sub = question if isinstance(question, SubQuestion) else None
    return {
        "doc_id": question.id,
        "main_id": sub.main_id if sub else question.id,
        "kind": MAIN if sub is None else SELECTIVE if sub.selective else ELIMINATIVE,
        "split": sub.split if sub else 0,
        "label": question.label,
        "none_gold": bool(sub and sub.none_gold),
        "group_size": group_size,
        "prompt": prompt,
    }


def _asked(
    question: MainQuestion | SubQuestion, context: bool = True, rationale: str | None = None, answer: str = ANSWER
) -> str:
    return question_block(question.context if context else None, question.question, question.options, rationale, answer)


def _by_main(subs: Iterable[SubQuestion]) -> dict[str, list[SubQuestion]]:
    found: dict[str, list[SubQuestion]] = {}
    for sub in sorted(subs, key=lambda s: s.option_index):
        found.setdefault(sub.main_id, []).append(sub)
    return found


def grouped_docs(
    subs: Sequence[SubQuestion],
    *,
    prefix: str = INSTRUCTION,
    with_main: bool = True,
    with_subs: bool = True,
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
            docs.append(_doc(main, len(group), prefix + _asked(main, context, answer=answer)))
        if with_subs:
            docs += [_doc(sub, len(group), prefix + _asked(sub, context, answer=answer)) for sub in group]
    return docs


def _five_prompts(run: Callable[[DemoSet], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A task that asks its questions under each published ReClor prompt: the docs of each, the
    doc id naming the prompt (``train_1@2``), so ids stay unique and pair across runs."""
    return [{**doc, "doc_id": f"{doc['doc_id']}@{shown.index}"} for shown in demo_sets("reclor") for doc in run(shown)]


def fewshot_docs(split: int, demos: str = "reclor", shots: int = 5, context: bool = True) -> list[dict[str, Any]]:
    """Test split ``split`` with published demonstration set ``split`` (Appendix E): every main
    question but those the demonstrations show, and every subquestion of the split (as Table
    3's denominators show; the task's DETAILS.md), each laid out as a demonstration is. Without
    context, the demonstrations are rebuilt from their fields in the context-free layout (Appendix M)."""
    shown = demo_sets(demos, shots)[split - 1]
    if context:
        demonstrated = shown.prompt
    else:
        shots_shown = zip(shown.questions, shown.options, shown.labels)
        demonstrated = demonstrations([demonstration(None, q, o, label) for q, o, label in shots_shown])
    return grouped_docs(
        sub_questions(split),
        prefix=INSTRUCTION + ahead_of_question(demonstrated),
        context=context,
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
        {**_doc(main, 0, prefix + biased_question(bias, main, target, answer)), "bias": bias, "bias_target": target}
        for main in main_questions()
        if main.id not in shown.main_ids
        for target in [bias_target(bias, main)]
    ]


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


def rationale_docs(setting: str, five_shot: bool = False) -> list[dict[str, Any]]:
    """Main questions with rationales appended (Table 5), on the main questions with a selective
    rationale and at least one eliminative one, so the four settings compare the same questions.
    Zero-shot, or ``five_shot`` as the paper ran it: under each published ReClor demonstration set,
    its demonstrations carrying the test question's kind of rationale, the shared subset less the
    main questions it demonstrates (so the pooled accuracy weights the five prompts by size)."""
    # main id -> option index -> rationale (gold answer of the subquestion about that option; none
    # where that is "None of the above choices": its rationale did not survive validation)
    known: dict[str, dict[int, str]] = {}
    for sub in all_sub_questions():
        if not sub.none_gold:
            known.setdefault(sub.main_id, {})[sub.option_index] = sub.gold_text
    mains = {main.id: main for main in main_questions()}
    subset = [
        main
        for main in mains.values()
        if main.label in known.get(main.id, {}) and any(index != main.label for index in known[main.id])
    ]

    def run(prefix: str, shown_ids: Sequence[str] = ()) -> list[dict[str, Any]]:
        return [
            _doc(main, 0, prefix + _asked(main, rationale=rationale_line(main, known[main.id], setting)))
            for main in subset
            if main.id not in shown_ids
        ]

    def under(shown: DemoSet) -> list[dict[str, Any]]:
        fields = zip(shown.links, shown.contexts, shown.questions, shown.options, shown.labels)
        shots = [
            demonstration(c, q, o, label, main_id and rationale_line(mains[main_id], known.get(main_id, {}), setting))
            for main_id, c, q, o, label in fields
        ]
        return run(INSTRUCTION + ahead_of_question(demonstrations(shots)), shown.main_ids)

    return _five_prompts(under) if five_shot else run(INSTRUCTION)


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


def alignment_docs(instruction: bool = True, five_shot: bool = False) -> list[dict[str, Any]]:
    """Rationale alignment (Appendix J): one doc per subquestion, asked about the main question and
    option it concerns; Table 7 reports it with and without the instruction. Zero-shot, or
    ``five_shot`` as the paper ran it: every item under each of five prompts (one per ReClor
    demonstration set), the exemplars' own items too, as the paper's counts show (2,218 incorrect
    options of 2,218): the pooled accuracy is the mean over the prompts."""
    lead = ALIGNMENT_INSTRUCTION if instruction else ""
    mains = {main.id: main for main in main_questions()}
    groups = _by_main(all_sub_questions()).values()

    def run(prefix: str) -> list[dict[str, Any]]:
        return [
            _doc(sub, len(subs), prefix + alignment_block(mains[sub.main_id], sub.option_index, sub.options))
            for subs in groups
            for sub in subs
        ]

    if not five_shot:
        return run(lead)
    return _five_prompts(lambda shown: run(lead + ahead_of_question(demonstrations(alignment_exemplars(shown)))))


def docs_for(variant: str, split: int | None = None, demos: str = "reclor", shots: int = 5) -> list[dict[str, Any]]:
    """Docs of one task variant (the ``dataset_kwargs`` of the task YAMLs)."""
    subs = all_sub_questions
    builders: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "combined": lambda: grouped_docs(subs()),
        "main": lambda: grouped_docs(subs(), with_subs=False),
        "sub": lambda: grouped_docs(subs(), with_main=False),
        "combined_noctx": lambda: grouped_docs(subs(), context=False),
        "zeroshot_cot_reasoning": lambda: grouped_docs(subs(), answer=ZEROSHOT_COT_ANSWER),
        # Table 9's five-shot row: every context removed, the demonstrations' too, all five runs in one task.
        "fewshot_noctx": lambda: _five_prompts(lambda shown: fewshot_docs(shown.index, context=False)),
        "alignment": alignment_docs,
        "alignment_noinstr": lambda: alignment_docs(instruction=False),
        "fewshot_alignment": lambda: alignment_docs(five_shot=True),
        "fewshot_alignment_noinstr": lambda: alignment_docs(instruction=False, five_shot=True),
        **{f"rationale_{s}": (lambda s=s: rationale_docs(s)) for s in RATIONALE_SETTINGS},
        **{f"fewshot_rationale_{s}": (lambda s=s: rationale_docs(s, five_shot=True)) for s in RATIONALE_SETTINGS},
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
