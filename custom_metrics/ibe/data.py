"""COPA and e-CARE as IBE-Eval documents: one doc per (question, option), in entailment form.

The paper turns each answer option into a hypothesis "premise -> conclusion" (its Figure 7):
for a *cause* question the option is the premise and the context the conclusion; for an
*effect* question the context is the premise and the option the conclusion. Each option
gets its own explanation, so a question yields two docs.

Training and test questions live in one lm-eval split (the selector needs explanations
for both), interleaved question by question so that ``--limit N`` keeps both kinds.
COPA's public source is a tarball of XML files; this module parses the XML of a split,
read from the mirror or from the pinned tarball (``common.sources.archive_member``).
"""

from __future__ import annotations

import io
import random
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common.download import GitHubFile
from custom_metrics.common.errors import DataError
from custom_metrics.common.lineage import with_lineage
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.results import source_lineage
from custom_metrics.common.sources import Source, archive_member, load_rows, to_dataset
from custom_metrics.common.task_loading import refuse_cut_groups, task_loader
from custom_metrics.ibe import LIMIT_GROUPS
from ibe_postprocess.inputs import read_inputs
from ibe_postprocess.parsing import capped
from ibe_postprocess.questions import question_id

if TYPE_CHECKING:
    import datasets

COPA_COMMIT = "9af88e4a2447e59afb220ade82b4a355da8fa1d6"
# Public COPA is one tarball holding both splits; the mirror holds the XML files themselves.
COPA_ARCHIVE = GitHubFile(
    owner="asgordon",
    repo="asgordon.github.io",
    commit=COPA_COMMIT,
    path="downloads/COPA-resources.tgz",
    sha256="5145348834d2081ad90da0397d1db3d70fa044e506bd8ce224194d24b04cdbbe",
    size=109432,
)
COPA_SOURCES = {
    split: Source(
        name=f"COPA {split}",
        mirror_path=f"copa/copa-{split}.xml",
        remote=COPA_ARCHIVE,
        member=f"COPA-resources/datasets/copa-{split}.xml",
    )
    for split in ("dev", "test")
}

ECARE_COMMIT = "c3b52648adcc919303a297a377811e24d703e197"
_ECARE_PINS = {  # split -> (sha256, bytes) of dataset/Causal_Reasoning/<split>.jsonl
    "train": ("540f828fe640f0bbef0e16c47a933b65625f49f20aef8a45884a836eb9c034c3", 3495616),
    "dev": ("cc95861592d28f49e25d540b9993fb01732306220e16a66b27f85b051c6dd433", 494316),
}
ECARE_SOURCES = {
    split: Source(
        name=f"e-CARE Causal_Reasoning {split}",
        mirror_path=f"ecare/Causal_Reasoning/{split}.jsonl",
        remote=GitHubFile("Waste-Wood", "e-CARE", ECARE_COMMIT, f"dataset/Causal_Reasoning/{split}.jsonl", *pin),
    )
    for split, pin in _ECARE_PINS.items()
}
ECARE_FIELDS = ("index", "premise", "ask-for", "hypothesis1", "hypothesis2", "label")

# The paper: 500 random e-CARE train items to fit the selector, 500 random dev items to
# test (e-CARE's test set is blind). The seed is ours: the paper does not publish one.
ECARE_TRAIN_SIZE = 500
ECARE_TEST_SIZE = 500
ECARE_SEED = 1234


def _item(item_id: str, context: str, asks_for: str, choices: list[str], gold: int) -> dict[str, Any]:
    """A question in the one shape COPA's and e-CARE's items are read into."""
    return {"id": item_id, "context": context, "asks_for": asks_for, "choices": choices, "gold": gold}


def parse_copa_xml(payload: bytes, where: str) -> list[dict[str, Any]]:
    """COPA items as dicts; a malformed item fails with the file and the item id."""
    try:
        root = ET.parse(io.BytesIO(payload)).getroot()
    except ET.ParseError as err:
        raise DataError(f"{where}: not valid XML ({err}).") from err
    items = []
    for element in root.iter("item"):
        item_id = element.get("id")
        context = f"{where}, item id={item_id!r}"
        fields = {tag: (element.findtext(tag) or "").strip() for tag in ("p", "a1", "a2")}
        empty = [tag for tag, text in fields.items() if not text]
        if item_id is None or empty:
            raise DataError(f"{context}: missing id or empty element(s) {empty}.")
        asks_for = element.get("asks-for")
        gold = element.get("most-plausible-alternative")
        if asks_for not in ("cause", "effect"):
            raise DataError(f"{context}: attribute 'asks-for' is {asks_for!r}, expected cause/effect.")
        if gold not in ("1", "2"):
            raise DataError(f"{context}: attribute 'most-plausible-alternative' is {gold!r}, expected 1/2.")
        items.append(_item(item_id, fields["p"], asks_for, [fields["a1"], fields["a2"]], int(gold)))
    if not items:
        raise DataError(f"{where}: no <item> elements.")
    return items


def load_ecare(split: str) -> list[dict[str, Any]]:
    rows = load_rows(ECARE_SOURCES[split], required=ECARE_FIELDS)
    items = []
    for row in rows:
        where = f"{ECARE_SOURCES[split].describe()} index {row['index']!r}"
        if row["ask-for"] not in ("cause", "effect"):
            raise DataError(f"{where}: field 'ask-for' is {row['ask-for']!r}, expected cause/effect.")
        if row["label"] not in (0, 1):
            raise DataError(f"{where}: field 'label' is {row['label']!r}, expected 0 or 1.")
        choices = [row["hypothesis1"].strip(), row["hypothesis2"].strip()]
        items.append(_item(str(row["index"]), row["premise"].strip(), row["ask-for"], choices, row["label"] + 1))
    return items


def sample_items(items: list[dict[str, Any]], size: int, seed: int, name: str) -> list[dict[str, Any]]:
    """A fixed random subset, kept in file order so runs are comparable across machines."""
    if size > len(items):
        raise DataError(f"{name}: asked for {size} random items but the file holds {len(items)}.")
    chosen = set(random.Random(seed).sample(range(len(items)), size))
    return [item for index, item in enumerate(items) if index in chosen]


def entailment_form(context: str, choice: str, asks_for: str) -> tuple[str, str]:
    """(premise, conclusion) of one option, following the paper's Figure 7."""
    return (choice, context) if asks_for == "cause" else (context, choice)


def option_docs(item: dict[str, Any], dataset: str, split: str) -> Iterator[dict[str, Any]]:
    for option, choice in enumerate(item["choices"], start=1):
        premise, conclusion = entailment_form(item["context"], choice, item["asks_for"])
        yield {
            "qid": question_id(dataset, item["id"]),
            "option": option,
            "split": split,
            "correct": int(option == item["gold"]),
            "premise": premise,
            "conclusion": conclusion,
            "asks_for": item["asks_for"],
            "context": item["context"],
            "choice": choice,
        }


def interleave(train: list[dict[str, Any]], test: list[dict[str, Any]], dataset: str) -> list[dict[str, Any]]:
    """Docs alternating train and test questions (both options of a question adjacent)."""
    docs: list[dict[str, Any]] = []
    for index in range(max(len(train), len(test))):
        for items, split in ((train, "train"), (test, "test")):
            if index < len(items):
                docs.extend(option_docs(items[index], dataset, split))
    return docs


def copa_docs() -> list[dict[str, Any]]:
    """COPA dev (500) as training questions and COPA test (500) as test questions."""
    return interleave(*(parse_copa_xml(*archive_member(COPA_SOURCES[split])) for split in ("dev", "test")), "copa")


def ecare_docs(
    train_size: int = ECARE_TRAIN_SIZE, test_size: int = ECARE_TEST_SIZE, seed: int = ECARE_SEED
) -> list[dict[str, Any]]:
    """500 random e-CARE train questions for training, 500 random dev questions for testing."""
    train = sample_items(load_ecare("train"), train_size, seed, ECARE_SOURCES["train"].name)
    test = sample_items(load_ecare("dev"), test_size, seed, ECARE_SOURCES["dev"].name)
    return interleave(train, test, "ecare")


def judge_docs(dataset: str, explanations: str | None) -> list[dict[str, Any]]:
    """One judge doc per test question of ``dataset`` whose two explanations were generated,
    read from the samples file of an ``ibe_<dataset>`` run (``--metadata`` explanations), each
    explanation as far as ``ibe score`` reads it (``parsing.capped``), each doc recording that run."""
    if not explanations:
        raise DataError(
            f"ibe_judge_{dataset} needs the samples file of an ibe_{dataset} run: "
            f'--metadata \'{{"explanations": "OUT/.../samples_ibe_{dataset}_<ts>.jsonl"}}\'.'
        )
    records, _ = read_inputs([Path(explanations).expanduser()])
    strangers = [r.qid for r in records if not r.qid.startswith(f"{dataset}-")]
    if strangers:
        raise DataError(
            f"{explanations}: qid {strangers[0]!r} is not a {dataset} question; is this an ibe_{dataset} samples file?"
        )
    by_question: dict[str, dict[int, Any]] = {}
    for record in records:
        if record.split == "test":
            by_question.setdefault(record.qid, {})[record.option] = record
    docs = []
    for qid, options in by_question.items():
        if sorted(options) != [1, 2]:
            continue  # a --limit run may cut a question in half; the count is in the results file
        pair = [options[1], options[2]]
        if sum(r.correct for r in pair) != 1:
            raise DataError(f"{explanations}: question {qid!r} does not have exactly one correct option.")
        docs.append(
            {
                "qid": qid,
                "gold": 1 + [r.correct for r in pair].index(1),
                "explanations": [
                    {"premise": r.premise, "conclusion": r.conclusion, "explanation": capped(r.explanation)[0]}
                    for r in pair
                ],
            }
        )
    if not docs:
        raise DataError(f"{explanations}: no test question of {dataset} has explanations for both options.")
    return with_lineage(docs, source_lineage(Path(explanations).expanduser()))


# The task YAMLs' loaders (`custom_dataset: !function utils.load_explain`), called as
# ``load(**metadata, **dataset_kwargs)``: the run's other settings arrive in ``_``.
@task_loader
def load_explain(
    dataset: str,
    ecare_train_size: int = ECARE_TRAIN_SIZE,
    ecare_test_size: int = ECARE_TEST_SIZE,
    ecare_seed: int = ECARE_SEED,
    **run_args: Any,
) -> dict[str, datasets.Dataset]:
    """One doc per (question, option) of ``dataset`` (``dataset_kwargs``); e-CARE's sample
    sizes and seed can be changed with ``--metadata``."""
    check_metadata_keys(f"ibe_{dataset}", run_args)
    if dataset == "copa":
        return {"test": to_dataset(copa_docs())}
    if dataset == "ecare":
        return {"test": to_dataset(ecare_docs(int(ecare_train_size), int(ecare_test_size), int(ecare_seed)))}
    raise DataError(f"IBE: unknown dataset {dataset!r} in dataset_kwargs; expected copa or ecare.")


@task_loader
def load_judge(
    dataset: str, explanations: str | None = None, both_orders: bool = False, **run_args: Any
) -> dict[str, datasets.Dataset]:
    """The two explanations of each test question, from an ``ibe_<dataset>`` samples file;
    ``both_orders`` (``ibe_judge_*_position``): each question also with its two explanations swapped."""
    check_metadata_keys(f"ibe_judge_{dataset}", run_args)
    if both_orders:
        task = f"ibe_judge_{dataset}_position"
        refuse_cut_groups(task, LIMIT_GROUPS[task])
    docs = judge_docs(dataset, explanations)
    if both_orders:
        docs = [shown for doc in docs for shown in ({**doc, "order": ORDER_SHOWN}, swapped(doc))]
    return {"test": to_dataset(docs)}


ORDER_SHOWN, ORDER_SWAPPED = "1-2", "2-1"  # the options' explanations first-second, as generated or swapped


def swapped(doc: dict[str, Any]) -> dict[str, Any]:
    """The judge doc with its two explanations in the other order: the same question, the correct
    explanation now in the other slot. A judge that reads content picks the same explanation in
    both docs; one that reads position picks the same slot."""
    return {**doc, "explanations": list(reversed(doc["explanations"])), "gold": 3 - doc["gold"], "order": ORDER_SWAPPED}
