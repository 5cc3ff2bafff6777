"""RULE (Kawabata & Sugawara, EMNLP 2023) data: the 943 main questions, the 3,003
subquestions and the published few-shot demonstration sets, checked and linked.

Every RULE metric beyond plain accuracy relies on links the files only imply: subquestion
``<main_id>_sub<k>`` is about main option ``answer{k-1}``, it is *selective* when that
option is the main question's answer, and its gold answer is the rationale for that
option. A broken link would silently shift consistency or the Table 5 rationales, so the
loader verifies each one and names the file, row and field that breaks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from custom_metrics.common.download import GitHubFile
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_json
from custom_metrics.common.sources import Source, data_key, fetch_file, load_rows

COMMIT = "ace6fb67c1000e9ccb955a1efca5893ee1d4c032"
SPLITS = (1, 2, 3, 4, 5)
N_OPTIONS = 4
NONE_OPTION = "None of the above choices"


def _pinned(path: str, sha256: str, size: int) -> GitHubFile:
    return GitHubFile("nii-cl", "rule", COMMIT, f"data/{path}", sha256, size)


MAIN_SOURCE = Source(
    name="RULE main questions",
    mirror_path="rule/eval_data/mainq.jsonl",
    remote=_pinned("eval_data/mainq.jsonl", "b8c652ab9c79f7d1499b0dcb5b22802245fed5afed3892001303122f859aedd0", 970226),
)
_SUB_PINS = {  # split -> (sha256, bytes) of data/eval_data/subq_split_<k>.jsonl
    1: ("e2554618346304986d32b3b3332a3f1274b1e0949e3a7e8435827469f67117cd", 1201980),
    2: ("021d0e15f8a0934cce969a8b3122909b60f397445f6fb730702ee1edc1247c72", 1152810),
    3: ("a0729979bd4842c930cc58cf6cffd7bb074c9a7d80b0a4a56de33e69a53aaa32", 1149585),
    4: ("d2396378efa88669c0f18dc0c14097409d7b5e0220c3a1286adc4cf57dcf3ac2", 1169580),
    5: ("69266866d5826c1144148fd794a882c0b2cceb8a027e4a917c2b2fe8b9615260", 1204704),
}
SUB_SOURCES = {
    k: Source(
        name=f"RULE subquestions, split {k}",
        mirror_path=f"rule/eval_data/subq_split_{k}.jsonl",
        remote=_pinned(f"eval_data/subq_split_{k}.jsonl", *_SUB_PINS[k]),
    )
    for k in SPLITS
}
PROMPTS_SOURCE = Source(
    name="RULE prompt file",
    mirror_path="rule/prompt/prompts.json",
    remote=_pinned("prompt/prompts.json", "9ebc7f67ece229519b76b1b3d75a5d48af30d0a6b9f2dfed05d492191f32aa93", 377334),
)

OPTION_FIELDS = tuple(f"answer{i}" for i in range(N_OPTIONS))
MAIN_FIELDS = ("id", "context", "question", *OPTION_FIELDS, "label")
SUB_FIELDS = (*MAIN_FIELDS, "main_id", "main_question", "main_option_correctness")
_SUB_ID = re.compile(r"^(?P<main>.+)_sub(?P<k>[1-4])$")


@dataclass(frozen=True)
class MainQuestion:
    id: str
    context: str
    question: str
    options: tuple[str, ...]
    label: int


@dataclass(frozen=True)
class SubQuestion:
    id: str
    main_id: str
    split: int
    option_index: int  # the main option this subquestion is about
    selective: bool  # about the main question's correct option
    context: str
    question: str
    options: tuple[str, ...]
    label: int

    @property
    def none_gold(self) -> bool:
        return self.options[self.label] == NONE_OPTION

    @property
    def gold_text(self) -> str:
        return self.options[self.label]


# The demonstrations of the published prompt file (``prompts.json``, entries ``5shots`` and
# ``1shot``): our name -> the file's name. ReClor questions (RULE's main questions, with the
# answer, or with a rationale before it: chain of thought) or RULE subquestions.
DEMOS = {
    "reclor": "vanilla",
    "rule": "subq",
    "cot": "cot_step_random",
    "cot_complex": "cot_step_complex",
    "cot_incorrect": "cot_incorrect",
}
# Chain-of-thought demonstrations: the answer follows a rationale, so the model generates one
# and its answer is read from the text (``answers.py``). ``cot`` is the paper's (Appendix D:
# the rationale of the correct option); the file's other two are not reported in the paper.
COT_DEMOS = ("cot", "cot_complex", "cot_incorrect")
SHOTS = {1: "1shot", 5: "5shots"}
# The setting of each kind of demonstrations in the paper's words (Tables 2 and 6).
DEMO_SETTINGS = {
    "reclor": "on ReClor",
    "rule": "on RULE",
    "cot": "on ReClor, CoT",
    "cot_complex": "on ReClor, CoT with complex rationales",
    "cot_incorrect": "on ReClor, CoT with every option's rationale",
}
SHOT_WORDS = {0: "zero", 1: "one", 5: "five"}


def demo_setting(shots: int, demos: str = "reclor") -> str:
    """A few-shot setting in the paper's words: "five-shot on ReClor", "one-shot on RULE"."""
    return "zero-shot" if shots == 0 else f"{SHOT_WORDS[shots]}-shot {DEMO_SETTINGS[demos]}"


def fewshot_task(shots: int, split: int, demos: str = "reclor") -> str:
    """The task of run ``split`` of a few-shot setting (``lm_eval_tasks/rule/_generate_configs.py`` writes them)."""
    return f"rule_{shots}shot{'' if demos == 'reclor' else '_' + demos}_split{split}"


@dataclass(frozen=True)
class DemoSet:
    """One published few-shot prompt: its verbatim text and, per demonstration, the RULE main
    question it is (``links``, so a run can leave it out; None where it is none, and for RULE
    subquestion demonstrations, several of which are not among the released subquestions)."""

    index: int  # 1..5, paired with test split ``index``
    prompt: str
    links: tuple[str | None, ...]
    labels: tuple[int, ...]
    none_gold: int  # demonstrations whose answer is "None of the above choices"
    # The demonstrations' fields, to rebuild them in another layout (without context).
    contexts: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    options: tuple[tuple[str, ...], ...] = ()
    # Chain-of-thought demonstrations (``cot``): each one's rationale, as the prompt shows it before
    # "Therefore the answer is Option<k>", to rebuild them with their options in another order.
    rationales: tuple[str, ...] = ()

    @property
    def main_ids(self) -> tuple[str, ...]:
        """The RULE main questions the demonstrations show."""
        return tuple(main_id for main_id in self.links if main_id is not None)


def _label(row: dict[str, Any], where: str) -> int:
    value = row["label"]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < N_OPTIONS:
        raise DataError(f"{where}: field 'label' is {value!r}, expected an integer 0-{N_OPTIONS - 1}.")
    return value


def _options(row: dict[str, Any], where: str) -> tuple[str, ...]:
    for field in OPTION_FIELDS:
        if not isinstance(row[field], str) or not row[field].strip():
            raise DataError(f"{where}: field '{field}' must be a non-empty string, got {row[field]!r}.")
    return tuple(row[field] for field in OPTION_FIELDS)


def _where(source: Source, index: int) -> str:
    return f"{source.describe()} row {index + 1}"


def forget_loaded() -> None:
    """Drop the rows read so far in this process, so the next reads see the files as they are now
    (the docs cache calls this before building docs for changed files)."""
    for cached in (_main_questions, _sub_questions, _demo_sets):
        cached.cache_clear()


def main_questions() -> tuple[MainQuestion, ...]:
    return _main_questions(data_key())


@lru_cache(maxsize=4)
def _main_questions(_data: tuple[str | None, ...]) -> tuple[MainQuestion, ...]:
    rows = load_rows(MAIN_SOURCE, required=MAIN_FIELDS)
    found: list[MainQuestion] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = _where(MAIN_SOURCE, index)
        if row["id"] in seen:
            raise DataError(f"{where}: field 'id' repeats {row['id']!r}.")
        seen.add(row["id"])
        found.append(MainQuestion(row["id"], row["context"], row["question"], _options(row, where), _label(row, where)))
    return tuple(found)


def sub_questions(split: int) -> tuple[SubQuestion, ...]:
    """Subquestions of one split, each checked against the main question it belongs to."""
    return _sub_questions(split, data_key())


@lru_cache(maxsize=20)
def _sub_questions(split: int, _data: tuple[str | None, ...]) -> tuple[SubQuestion, ...]:
    source = SUB_SOURCES[split]
    mains = {main.id: main for main in main_questions()}
    found: list[SubQuestion] = []
    for index, row in enumerate(load_rows(source, required=SUB_FIELDS)):
        where = _where(source, index)
        match = _SUB_ID.match(str(row["id"]))
        if not match or match["main"] != row["main_id"]:
            raise DataError(
                f"{where}: field 'id' is {row['id']!r}, expected '<main_id>_sub<1-4>' with main_id {row['main_id']!r}."
            )
        main = mains.get(row["main_id"])
        if main is None:
            raise DataError(f"{where}: field 'main_id' {row['main_id']!r} is not a main question id.")
        option_index = int(match["k"]) - 1
        selective = option_index == main.label
        if row["main_option_correctness"] is not selective:
            raise DataError(
                f"{where}: field 'main_option_correctness' is {row['main_option_correctness']!r}, but the "
                f"subquestion is about option {option_index} and the main answer is {main.label}."
            )
        about = row["main_question"].get("option") if isinstance(row["main_question"], dict) else None
        if not isinstance(about, str) or about.strip() != main.options[option_index].strip():
            raise DataError(
                f"{where}: field 'main_question.option' does not match main option {option_index} of {main.id}."
            )
        found.append(
            SubQuestion(
                id=row["id"],
                main_id=row["main_id"],
                split=split,
                option_index=option_index,
                selective=selective,
                context=row["context"],
                question=row["question"],
                options=_options(row, where),
                label=_label(row, where),
            )
        )
    return tuple(found)


def all_sub_questions() -> tuple[SubQuestion, ...]:
    found = [sub for split in SPLITS for sub in sub_questions(split)]
    ids = [sub.id for sub in found]
    if len(ids) != len(set(ids)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise DataError(f"RULE subquestion ids repeat across splits: {repeated[:5]}.")
    return tuple(found)


def _links(contexts: list[str], questions: list[str]) -> tuple[str | None, ...]:
    """The RULE main question each ReClor demonstration is (matched by text), None where it is none."""
    by_text = {(main.context.strip(), main.question.strip()): main.id for main in main_questions()}
    return tuple(by_text.get((context.strip(), question.strip())) for context, question in zip(contexts, questions))


def demo_sets(demos: str = "reclor", shots: int = 5) -> tuple[DemoSet, ...]:
    """The five published prompts of one kind of demonstrations (``DEMOS``) and number of
    shots (``SHOTS``), in test-split order."""
    if demos not in DEMOS:
        raise DataError(f"unknown RULE demonstrations {demos!r}; expected one of {sorted(DEMOS)}.")
    if shots not in SHOTS:
        raise DataError(f"RULE's prompt file has {sorted(SHOTS)}-shot prompts, not {shots!r}-shot.")
    return _demo_sets(demos, shots, data_key())


@lru_cache(maxsize=16)
def _demo_sets(demos: str, shots: int, _data: tuple[str | None, ...]) -> tuple[DemoSet, ...]:
    document = read_json(fetch_file(PROMPTS_SOURCE))
    key, name = SHOTS[shots], DEMOS[demos]
    where = PROMPTS_SOURCE.describe()
    try:
        entry = next(entry["prompt"] for entry in document[key] if entry["name"] == name)
        prompts, contexts, questions, options, labels = (
            entry[field] for field in ("prompt", "context", "question", "options", "label")
        )
    except (KeyError, TypeError, StopIteration) as err:
        raise DataError(
            f"{where}: expected {key!r} to hold an entry named {name!r} "
            f"with fields prompt/context/question/options/label ({err})."
        ) from err
    if len(prompts) != len(SPLITS):
        raise DataError(f"{where}: field '{key}.{name}.prompt' holds {len(prompts)} prompts, expected {len(SPLITS)}.")
    sets: list[DemoSet] = []
    for index, prompt in enumerate(prompts):
        where_set = f"{where}: {key}.{name} set {index + 1}"
        fields = (contexts[index], questions[index], options[index], labels[index])
        if any(not isinstance(field, list) or len(field) != shots for field in fields):
            raise DataError(f"{where_set}: context/question/options/label must each list {shots} demonstrations.")
        try:
            shot_labels = tuple(int(label) for label in labels[index])
        except (TypeError, ValueError) as err:
            raise DataError(f"{where_set}: field 'label' holds {labels[index]!r}, not option numbers.") from err
        shot_options = tuple(tuple(shot) for shot in options[index])
        none_gold = sum(shot[label] == NONE_OPTION for shot, label in zip(shot_options, shot_labels))
        links = (None,) * shots if demos == "rule" else _links(contexts[index], questions[index])
        rationales = _rationales(entry, index, shots, where_set) if demos == "cot" else ()
        sets.append(
            DemoSet(
                index + 1,
                prompt,
                links,
                shot_labels,
                none_gold,
                tuple(contexts[index]),
                tuple(questions[index]),
                shot_options,
                rationales,
            )
        )
    return tuple(sets)


def _rationales(entry: dict[str, Any], index: int, shots: int, where: str) -> tuple[str, ...]:
    """The rationales of set ``index`` of a chain-of-thought entry (one string per demonstration)."""
    found = entry.get("rationales")
    found = found[index] if isinstance(found, list) and len(found) > index else None
    if not isinstance(found, list) or len(found) != shots or not all(isinstance(text, str) for text in found):
        raise DataError(f"{where}: field 'rationales' must list {shots} rationale strings.")
    return tuple(found)
