"""IBE-Eval pipeline: data and tasks, inputs, the score stage on local stand-in models, caching."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.ibe import data
from custom_metrics.ibe.metrics import process_generation
from custom_metrics.ibe.prompts import explanation_prompt
from ibe_postprocess import uncertainty
from ibe_postprocess.features import ScoreSettings, score
from ibe_postprocess.inputs import read_inputs
from ibe_postprocess.report import write_report
from ibe_postprocess.uncertainty import CertaintyModel, UncertaintyScorer, hedge_cues, lexicon_certainty
from tests.helpers import BALLOON, MIRROR, TASKS_DIR
from tests.tiny_models import bpe_tokenizer, nli_label_config, tiny_model


def _tokenizer():
    corpus = [json.loads(line)["explanation"] for line in BALLOON.read_text().splitlines()]
    return bpe_tokenizer(corpus, 300, ["<s>", "<pad>", "</s>", "<unk>"])


def tiny_classifier(path: Path, num_labels: int) -> Path:
    """A 2-layer RoBERTa classifier with random weights: a stand-in for a Hub model."""
    from transformers import RobertaForSequenceClassification

    tokenizer = _tokenizer()
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"} if num_labels == 3 else {0: "LABEL_0"}
    return tiny_model(
        path,
        RobertaForSequenceClassification,
        tokenizer,
        seed=0,
        num_attention_heads=2,
        max_position_embeddings=160,
        pad_token_id=tokenizer.pad_token_id,
        **nli_label_config(labels),
    )


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory, tiny_nli: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ibe-models")
    return {"nli": tiny_nli, "certainty": tiny_classifier(root / "certainty", 1)}


# --- data and tasks --------------------------------------------------------------------------


def test_entailment_form_follows_figure7() -> None:
    assert data.entailment_form("The balloon expanded.", "I blew into it.", "cause") == (
        "I blew into it.",
        "The balloon expanded.",
    )
    assert data.entailment_form("The child punched the blocks.", "The blocks scattered.", "effect") == (
        "The child punched the blocks.",
        "The blocks scattered.",
    )


def test_copa_docs_from_the_mirror_interleave_train_and_test(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    monkeypatch.chdir(tmp_path)
    docs = data.copa_docs()
    assert (
        len(docs) == 16
        and [d["split"] for d in docs[:8]] == ["train"] * 2 + ["test"] * 2 + ["train"] * 2 + ["test"] * 2
    )
    first = docs[0]
    assert first == {
        "qid": "copa-1",
        "option": 1,
        "split": "train",
        "correct": 1,
        "premise": "The sun was rising.",
        "conclusion": "My body cast a shadow over the grass.",
        "asks_for": "cause",
        "context": "My body cast a shadow over the grass.",
        "choice": "The sun was rising.",
    }
    effect = next(d for d in docs if d["qid"] == "copa-502" and d["option"] == 1)
    assert (effect["premise"], effect["conclusion"]) == ("I emptied my pockets.", "I retrieved a ticket stub.")
    prompt = explanation_prompt(first)
    assert prompt.startswith("You are given a premise and a conclusion.")
    assert "The woman banished the children from her property." in prompt
    assert prompt.endswith(
        "Premise: The sun was rising.\nConclusion: My body cast a shadow over the grass.\nExplanation:\n"
    )


def test_ecare_sampling_is_fixed_and_checked(monkeypatch) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    docs = data.ecare_docs(train_size=3, test_size=2, seed=7)
    assert docs == data.ecare_docs(train_size=3, test_size=2, seed=7)
    assert sum(d["split"] == "train" for d in docs) == 6 and sum(d["split"] == "test" for d in docs) == 4
    with pytest.raises(DataError, match="asked for 500 random items but the file holds 6"):
        data.ecare_docs()


def test_bad_copa_xml_names_file_and_item(tmp_path) -> None:
    bad = (
        b'<copa-corpus><item id="7" asks-for="reason" most-plausible-alternative="1">'
        b"<p>a</p><a1>b</a1><a2>c</a2></item></copa-corpus>"
    )
    with pytest.raises(DataError, match=r"x\.xml, item id='7': attribute 'asks-for'"):
        data.parse_copa_xml(bad, "x.xml")


def test_process_generation_describes_format() -> None:
    text = json.loads(BALLOON.read_text().splitlines()[0])["explanation"]
    assert process_generation({}, [text]) == {"steps": 2.0, "well_formed": 1.0, "no_steps": 0.0}
    assert process_generation({}, ["lol"]) == {"steps": 0.0, "well_formed": 0.0, "no_steps": 1.0}


def _sample(doc: dict, text: str) -> str:
    return json.dumps({"doc_id": 0, "doc": doc, "filtered_resps": [text], "resps": [[text]]})


def test_judge_docs_pair_the_test_explanations(tmp_path) -> None:
    samples = tmp_path / "samples_ibe_copa.jsonl"
    base = {"premise": "p", "conclusion": "c"}
    samples.write_text(
        "\n".join(
            [
                _sample({**base, "qid": "copa-1", "option": 1, "split": "train", "correct": 1}, "t1"),
                _sample({**base, "qid": "copa-1", "option": 2, "split": "train", "correct": 0}, "t2"),
                _sample({**base, "qid": "copa-501", "option": 1, "split": "test", "correct": 0}, "e1"),
                _sample({**base, "qid": "copa-501", "option": 2, "split": "test", "correct": 1}, "e2"),
                _sample({**base, "qid": "copa-502", "option": 1, "split": "test", "correct": 1}, "half"),
            ]
        )
        + "\n"
    )
    (doc,) = data.judge_docs("copa", str(samples))
    assert doc["qid"] == "copa-501" and doc["gold"] == 2
    assert [e["explanation"] for e in doc["explanations"]] == ["e1", "e2"]
    with pytest.raises(DataError, match="not a ecare question"):
        data.judge_docs("ecare", str(samples))
    with pytest.raises(DataError, match="needs the samples file"):
        data.judge_docs("copa", None)


@pytest.mark.fulldata
def test_task_doc_counts_match_the_paper(full_data: Path, monkeypatch) -> None:
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    loaded = manager.load(["ibe_copa", "ibe_ecare"])["tasks"]
    for name in ("ibe_copa", "ibe_ecare"):
        docs = list(loaded[name].test_docs())
        questions = {(d["split"], d["qid"]) for d in docs}
        assert len(docs) == 2000, name
        assert sum(split == "train" for split, _ in questions) == 500
        assert sum(split == "test" for split, _ in questions) == 500
        assert sum(d["correct"] for d in docs) == 1000
    copa_test = {d["qid"] for d in loaded["ibe_copa"].test_docs() if d["split"] == "test"}
    assert copa_test == {f"copa-{i}" for i in range(501, 1001)}


# --- inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "row, message",
    [
        ({"qid": "a", "option": 1, "premise": "p", "conclusion": "c", "explanation": "e"}, "missing field.*'correct'"),
        (
            {"qid": "a", "option": 1, "premise": "p", "conclusion": "c", "explanation": 3, "correct": 1},
            "'explanation' must be a string",
        ),
        (
            {"qid": "a", "option": 1, "premise": "p", "conclusion": "c", "explanation": "e", "correct": 2},
            "'correct' is 2",
        ),
        (
            {
                "qid": "a",
                "option": 1,
                "premise": "p",
                "conclusion": "c",
                "explanation": "e",
                "correct": 1,
                "split": "dev",
            },
            "'split' is 'dev'",
        ),
        (
            {"qid": "a", "option": 1, "premise": " ", "conclusion": "c", "explanation": "e", "correct": 1},
            "'premise' must be a non-empty",
        ),
    ],
)
def test_bad_plain_rows_name_file_line_and_field(tmp_path, row: dict, message: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError, match=rf"in\.jsonl:2.*{message}"):
        read_inputs([path])


def test_duplicate_explanations_are_an_error(tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(BALLOON.read_text() + BALLOON.read_text().splitlines()[0] + "\n")
    with pytest.raises(DataError, match=r"in\.jsonl:3: qid 'balloon' option 1 was already read at .*in\.jsonl:1"):
        read_inputs([path])


# --- uncertainty -----------------------------------------------------------------------------


def test_hedge_cues_by_category() -> None:
    assert hedge_cues("The blocks may fall if the child believes it might.") == {
        "epistemic": 2,
        "doxastic": 1,
        "conditional": 1,
    }
    assert lexicon_certainty("The blocks may fall if the child believes it might.") == 6 - 3.5
    assert lexicon_certainty("The balloon expanded.") == 6.0


def test_certainty_model_is_encoded_like_the_authors(stand_ins) -> None:
    model = CertaintyModel(str(stand_ins["certainty"]), batch_size=2)
    scores = model.certainty(["The balloon expanded.", "It may have expanded.", "Perhaps."])
    assert len(scores) == 3 and len(set(scores)) == 3
    assert model.certainty(["Perhaps."]) == pytest.approx(scores[2:], abs=1e-5)  # batching changes nothing


def test_unloadable_paper_certainty_model_falls_back_to_the_lexicon(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(uncertainty, "PAPER_CERTAINTY_MODEL", str(tmp_path / "no-such-model"))  # offline, uncached
    scorer = UncertaintyScorer()
    assert scorer.model is None and scorer.source.startswith("lexicon (certainty model")


def test_a_named_certainty_model_that_cannot_load_is_an_error_naming_it(tmp_path) -> None:
    with pytest.raises(DataError, match=r"--certainty-model .*no-such-model: cannot be loaded .* 'lexicon'"):
        UncertaintyScorer(str(tmp_path / "no-such-model"))


# --- the score and report stages --------------------------------------------------------------


def test_score_balloon_with_stand_in_models_and_resume(stand_ins, tmp_path) -> None:
    records, _ = read_inputs([BALLOON])
    train = [r.__class__(**{**r.__dict__, "split": "train", "qid": "balloon-train"}) for r in records]
    settings = ScoreSettings(
        nli_judge=f"seqcls:{stand_ins['nli']}", certainty_model=str(stand_ins["certainty"]), batch_size=1
    )
    out = tmp_path / "features"
    rows = score(train + records, out, settings)
    frame = pd.read_csv(out / "features.csv")
    assert list(frame.columns[:10]) == [
        "qid",
        "option",
        "split",
        "correct",
        "consistent",
        "depth",
        "drift",
        "coherence",
        "uncertainty",
        "flag",
    ]
    test = frame[frame.split == "test"].set_index("option")
    assert test.loc[1, "consistent"] == 1 and test.loc[2, "consistent"] == 1
    assert (test.loc[1, "depth"], test.loc[2, "depth"]) == (2, 3)
    assert test.loc[2, "drift"] > test.loc[1, "drift"]
    assert frame["coherence"].between(-1, 1).all() and frame["uncertainty"].notna().all()
    assert (frame["uncertainty_source"] == str(stand_ins["certainty"])).all()
    assert frame["hedge_epistemic"].tolist() == [2, 3, 2, 3]  # E1: "can" twice; E2: "may" three times
    assert rows[1]["program"].endswith("?- balloon_expand(x).")
    for row in rows:  # the steps behind every number, as the sample viewer shows them
        assert sorted(step["rule"] for step in row["proof_steps"][:-1]) == row["proof_rules"]
        assert row["proof_steps"][-1]["clause"] == row["program"].splitlines()[0]  # the premise fact ends it
        assert math.prod(step["similarity"] for step in row["proof_steps"]) == pytest.approx(row["proof_score"])
        per_step = [step["coherence"] for step in row["step_coherence"]]
        assert len(per_step) == row["n_steps"] and sum(per_step) / len(per_step) == pytest.approx(row["coherence"])
        assert len(row["drift_concepts"]) == row["drift"]
        cues = [cue["category"] for cue in row["hedge_cues"]]
        assert cues.count("epistemic") == row["hedge_epistemic"] and cues.count("doxastic") == row["hedge_doxastic"]

    # A second run reads every costly result back from the cache, computing nothing.
    cached = {
        name: (out / "cache" / name).read_text() for name in ("proofs.jsonl", "coherence.jsonl", "uncertainty.jsonl")
    }
    assert score(train + records, out, settings) == rows
    assert {name: (out / "cache" / name).read_text() for name in cached} == cached

    report = write_report(out).read_text()
    assert "| IBE Features | Depth (Parsimony) |" in report and "Uncertainty model:" in report
    # The coherence judge is recorded on every row, in report.json, and flagged when it is
    # not the paper's NLI model.
    judge = f"seqcls:{stand_ins['nli']}"
    assert (frame["coherence_judge"] == judge).all()
    assert json.loads((out / "report.json").read_text())["coherence_judges"] == [judge]
    assert "**Coherence is not judged by the paper's NLI model**" in report
    assert (out / "figure2.png").stat().st_size > 0 and (out / "table1.png").is_file()


def test_malformed_explanations_become_flagged_rows(stand_ins, tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "qid": "q",
                    "option": i,
                    "premise": "It rained.",
                    "conclusion": "The street got wet.",
                    "explanation": text,
                    "correct": int(i == 1),
                }
            )
            for i, text in enumerate(
                [
                    "",
                    "lol lol",
                    "Step 1: IF it rains, THEN streets get wet.\nTherefore, since it rained, the street got wet.",
                ],
                1,
            )
        )
        + "\n"
    )
    records, _ = read_inputs([path])
    rows = score(
        records, tmp_path / "out", ScoreSettings(nli_judge=f"seqcls:{stand_ins['nli']}", certainty_model="lexicon")
    )
    assert [row["flag"] for row in rows] == [
        "empty explanation",
        "no IF-THEN steps; no 'Therefore' summary",
        "step 1 has no assumption",
    ]
    assert [row["consistent"] for row in rows] == [0, 0, 1]
    assert rows[0]["drift"] is None and rows[0]["coherence"] is None and rows[0]["uncertainty"] is None
    assert rows[2]["uncertainty_source"] == "lexicon" and rows[2]["uncertainty"] == 0.0


def test_llm_formalizer_output_is_guarded_with_fallback(stand_ins, tmp_path) -> None:
    """A (random-weight) LM writes gibberish Prolog: rejected, flagged, deterministic fallback."""
    from transformers import LlamaForCausalLM

    tokenizer = _tokenizer()
    tiny_model(
        tmp_path / "lm",
        LlamaForCausalLM,
        tokenizer,
        seed=0,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    records, _ = read_inputs([BALLOON])
    settings = ScoreSettings(
        nli_judge=f"seqcls:{stand_ins['nli']}", certainty_model="lexicon", formalizer=f"lm:{tmp_path / 'lm'}"
    )
    rows = score(records, tmp_path / "out", settings)
    for row in rows:
        assert "autoformalized program rejected" in row["flag"] and "deterministic formalization used" in row["flag"]
        assert row["formalization"] == "deterministic"
    assert [(row["consistent"], row["depth"]) for row in rows] == [(1, 2), (1, 3)]
    assert len((tmp_path / "out" / "cache" / "autoformalized.jsonl").read_text().splitlines()) == 2
