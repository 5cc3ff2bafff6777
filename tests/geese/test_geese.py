"""GEESE: the authors' exact prompts, the anonymizer, metrics and the M1 -> M2 file hand-over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import custom_metrics.geese.anonymize as geese_anon
import custom_metrics.geese.data as geese_data
import custom_metrics.geese.metrics as geese_metrics
import custom_metrics.geese.prompts as geese_prompts
from custom_metrics.common.errors import DataError
from tests.geese.authors import AUTHORS_TASKS, PAIR, TABLE_2_SETTINGS, alone_prompt, authors_prompt
from tests.helpers import MIRROR, TASKS_DIR
from tests.suite_tasks import with_docs

S1 = (
    "Sentence 1: Claude Chabrol (nato il 24 giugno 1930) è un regista francese diventato famoso "
    "negli ultimi 40 anni sin dal suo primo film, Le Beau Serge, per le sue agghiaccianti storie "
    "di omicidi, tra cui Le Boucher.\n"
)
S2 = "Sentence 2: Le Beau Serge è stato diretto da Chabrol.\n"
M2_SETTINGS = tuple(AUTHORS_TASKS)
ALONE_SETTINGS = ("human", "llama3", "llama3_whynot", "llama3_implicit")  # the explanation-only tasks


@pytest.fixture()
def doc_1(fixture_mirror: Path) -> dict:
    return next(doc for doc in geese_data.load_docs() if doc["id"] == "1")


@pytest.fixture(scope="module")
def m2_tasks() -> dict:
    """Every M2 task with a fixed hint, with and without the pair, on the fixture mirror (one load)."""
    from lm_eval.tasks import TaskManager

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
        names = [f"geese_{setting}" for setting in M2_SETTINGS] + [f"geese_{s}_only" for s in ALONE_SETTINGS]
        return with_docs(manager.load(names)["tasks"])


def test_m2_prompt_pinned_byte_for_byte(m2_tasks: dict) -> None:
    """Doc 1 with no hint: the data's padding of text_t and text_h stays, as in the authors' runs."""
    task = m2_tasks["geese_noexp"]
    doc = next(doc for doc in task.test_docs() if doc["id"] == "1")
    assert task.fewshot_context(doc, 0) == (
        "Your task is to predict the entailment label between two sentences, selecting one label among "
        "YES (entailment), NO (contradiction), or UNKNOWN (neutrality). Sentence 1:\n     Claude Chabrol "
        "(nato il 24 giugno 1930) è un regista francese diventato famoso negli ultimi 40 anni sin dal suo "
        "primo film, Le Beau Serge, per le sue agghiaccianti storie di omicidi, tra cui Le Boucher.\n     "
        "Sentence 2: \n     Le Beau Serge è stato diretto da Chabrol.\n     Hint: Not given. Entailment label:"
    )


def test_m2_prompts_equal_the_authors_template_rendering(m2_tasks: dict) -> None:
    for setting in M2_SETTINGS:
        task = m2_tasks[f"geese_{setting}"]
        docs = list(task.test_docs())
        assert len(docs) == 6, setting
        for doc in docs:
            assert doc["hint"] == geese_data.HINTS[setting](doc)
            assert task.fewshot_context(doc, 0) == authors_prompt(setting, doc), (setting, doc["id"])


def test_explanation_only_template_is_the_m2_template_without_the_pair(m2_tasks: dict) -> None:
    """One difference between the two templates, the pair; and every mirror doc renders as the
    authors' template without it."""
    with_pair = m2_tasks["geese_human"].config.doc_to_text
    for setting in ALONE_SETTINGS:
        task = m2_tasks[f"geese_{setting}_only"]
        assert task.config.doc_to_text == with_pair.replace(PAIR, "") != with_pair, setting
        assert task.config.doc_to_choice == m2_tasks["geese_human"].config.doc_to_choice
        docs = list(task.test_docs())
        assert len(docs) == 6, setting
        for doc in docs:
            assert doc["hint"] == geese_data.HINTS[setting](doc)
            assert task.fewshot_context(doc, 0) == alone_prompt(setting, doc), (setting, doc["id"])


def test_m1_prompts_pinned(doc_1: dict) -> None:
    label_line = "Entailment relation label: YES (entailment).\n"
    assert geese_prompts.m1_prompt({**doc_1, "explanation_type": "whyexp"}) == (
        "Your task is to clarify the entailment relationship between a pair of sentences by "
        "explaining why a classifier predicted a specific entailment label.\n"
        f"{S1}{S2}{label_line}Explain why label YES is correct."
    )
    assert geese_prompts.m1_prompt({**doc_1, "explanation_type": "whynot"}) == (
        "Your task is to clarify the entailment relationship between a pair of sentences by "
        "explaining why a classifier did not predict any other entailment label.\n"
        f"{S1}{S2}{label_line}Explain why labels NO and UNKNOWN are not correct."
    )
    assert geese_prompts.m1_prompt({**doc_1, "explanation_type": "implicit"}) == (
        "Your task is to explain the entailment relationship between a pair of sentences by "
        "providing the implicit information connecting them.\n"
        f"{S1}{S2}{label_line}Explain how the two sentences are connected."
    )
    with pytest.raises(ValueError, match="unknown GEESE explanation type"):
        geese_prompts.m1_prompt({**doc_1, "explanation_type": "why"})


# The paper's Table 1 anon_whyexp (id 393), with the label words put back where it shows XXX.
TABLE_1_RAW = (
    "The entailment relationship between the two sentences is UNKNOWN because the relationship "
    "is not clearly established. [...] it is not clear how the information presented in Sentence 1 "
    "supports or contradicts the information in Sentence 2. Therefore, the entailment label is "
    "UNKNOWN because the relationship between the two sentences is not clear. For example, if the "
    "entailment label was YES, it would mean that Sentence 1 logically implies Sentence 2, [...] "
    "Similarly, if the entailment label was NO, it would mean that Sentence 1 logically "
    "contradicts Sentence 2, [...]"
)
TABLE_1_ANON = (
    "The XXX relationship between the two sentences is XXX because the relationship "
    "is not clearly established. [...] it is not clear how the information presented in Sentence 1 "
    "supports or XXX the information in Sentence 2. Therefore, the XXX label is "
    "XXX because the relationship between the two sentences is not clear. For example, if the "
    "XXX label was XXX, it would mean that Sentence 1 logically implies Sentence 2, [...] "
    "Similarly, if the XXX label was XXX, it would mean that Sentence 1 logically "
    "XXX Sentence 2, [...]"
)


def test_anonymizer_on_the_papers_table_1() -> None:
    # Table 1 leaves one "implies" unmasked although the stated rule masks impl*; the
    # published anon_* fields follow the rule, and so do we (see the task README).
    assert geese_anon.anonymize(TABLE_1_RAW) == TABLE_1_ANON.replace("logically implies", "logically XXX")


def test_anonymizer_reproduces_published_fields(fixture_mirror: Path) -> None:
    for doc in geese_data.load_docs():
        assert geese_anon.anonymize(doc["whyexp"]) == doc["anon_whyexp"]
        assert geese_anon.anonymize(doc["explanation"]) == doc["anon_human"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The label is YES.", "The label is XXX."),
        ("No, it is UNKNOWN; yes.", "XXX, it is XXX; XXX."),
        ("It entails, contradicts and is neutral.", "It XXX, XXX and is XXX."),
        ("This implies an implicit link.", "This XXX an XXX link."),  # as the authors' data
        ("Contraddizione evidente", "XXX evidente"),
        ('the label is "UNKNOWN" (neutr', 'the label is "XXX" (XXX'),  # truncated at max_gen_toks
        ("NOT, NONE, KNOWN, unknowns, nope", "NOT, NONE, KNOWN, unknowns, nope"),
        ("yes-man (NO)", "XXX-man (XXX)"),
        ("  padded  ", "padded"),
        ("", ""),
    ],
)
def test_anonymizer_edge_cases(text: str, expected: str) -> None:
    assert geese_anon.anonymize(text) == expected
    assert geese_anon.anonymize(expected) == expected  # idempotent: safe to apply twice


def test_prediction_metrics() -> None:
    doc = {"label": "NO"}
    scores = geese_metrics.process_prediction(doc, [(-3.0, False), (-1.0, True), (-2.0, False)])
    assert scores["acc"] == 1.0 and scores["f1_macro"] == (1, 1)
    # gold, pred: YES->YES, YES->NO, NO->NO, UNKNOWN->YES
    pairs = [(0, 0), (0, 1), (1, 1), (2, 0)]
    assert geese_metrics.acc_yes(pairs) == 0.5
    assert geese_metrics.acc_no(pairs) == 1.0
    assert geese_metrics.acc_unknown(pairs) == 0.0
    # F1: YES p=1/2 r=1/2 -> .5; NO p=1/2 r=1 -> 2/3; UNKNOWN 0 -> macro (0.5+0.6667+0)/3
    assert geese_metrics.f1_macro(pairs) == pytest.approx((0.5 + 2 / 3) / 3)


def test_generation_metrics_flag_empty_output() -> None:
    assert geese_metrics.process_generation({}, ["XXX because XXX holds"]) == {
        "words": 4.0,
        "masked_terms": 2.0,
        "empty": 0.0,
    }
    assert geese_metrics.process_generation({}, ["   "])["empty"] == 1.0


def _samples_file(path: Path, rows: list[tuple[str, str]]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for index, (doc_id, text) in enumerate(rows):
            handle.write(
                json.dumps({"doc_id": index, "doc": {"id": doc_id}, "resps": [[text]], "filtered_resps": [text]}) + "\n"
            )
    return path


def test_selfexp_attaches_explanations_by_id(fixture_mirror: Path, tmp_path: Path) -> None:
    samples = _samples_file(
        tmp_path / "s.jsonl", [("393", "The label is YES, it entails."), ("1", "Chabrol directed it.")]
    )
    docs = geese_data.attach_explanations(geese_data.load_docs(), samples)
    assert [doc["id"] for doc in docs] == ["1", "393"]
    assert docs[1]["self_explanation"] == "The label is XXX, it XXX."  # raw text is anonymized too


def test_selfexp_rejects_missing_and_mismatched_files(fixture_mirror: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        geese_data.attach_explanations(geese_data.load_docs(), tmp_path / "nope.jsonl")
    foreign = _samples_file(tmp_path / "rule.jsonl", [("train_1348", "x")])
    with pytest.raises(DataError, match="not GEESE test ids"):
        geese_data.attach_explanations(geese_data.load_docs(), foreign)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"doc": {"id": "1"}, "filtered_resps": ["ok"]}\n{"doc": \n')
    with pytest.raises(DataError, match=r"broken.jsonl:2: not valid JSON"):
        geese_data.attach_explanations(geese_data.load_docs(), broken)
    no_id = tmp_path / "no_id.jsonl"
    no_id.write_text('{"doc": {"id": "1"}, "filtered_resps": ["ok"]}\n{"doc": {}, "filtered_resps": ["ok"]}\n')
    with pytest.raises(DataError, match=r"no_id.jsonl:2: field 'doc.id' missing"):
        geese_data.attach_explanations(geese_data.load_docs(), no_id)
    no_text = tmp_path / "no_text.jsonl"
    no_text.write_text('{"doc": {"id": "1"}, "filtered_resps": [["-1.5", "False"]]}\n')
    with pytest.raises(DataError, match=r"no_text.jsonl:1: field 'filtered_resps' holds no generated text"):
        geese_data.attach_explanations(geese_data.load_docs(), no_text)


@pytest.mark.fulldata
def test_anonymizer_matches_all_published_rows(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    docs = geese_data.load_docs()
    assert len(docs) == 800
    for field in ("whyexp", "whynot", "implicit"):
        assert all(geese_anon.anonymize(doc[field]) == doc[f"anon_{field}"] for doc in docs), field
    assert all(geese_anon.anonymize(doc["explanation"]) == doc["anon_human"] for doc in docs)


@pytest.mark.fulldata
def test_all_m2_prompts_equal_the_authors_over_the_full_data(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Table 2's 3,200 prompts (4 settings x 800 docs), and the 1,600 of the authors' two other
    Llama-3 hints, as lm-eval builds them from our tasks, equal the authors' template rendering."""
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    tasks = manager.load([f"geese_{setting}" for setting in M2_SETTINGS])["tasks"]
    compared = {}
    for setting in M2_SETTINGS:
        task = tasks[f"geese_{setting}"]
        docs = list(task.test_docs())
        assert len(docs) == 800
        mismatched = [d["id"] for d in docs if task.fewshot_context(d, 0) != authors_prompt(setting, d)]
        assert mismatched == [], (setting, mismatched[:5])
        compared[setting] = len(docs)
    assert sum(compared[s] for s in TABLE_2_SETTINGS) == 3200
