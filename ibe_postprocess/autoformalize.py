"""Optional LLM autoformalization (the paper's Appendix A.3, Figure 9).

The paper has GPT-3.5 translate each explanation into Prolog: the conclusion becomes a
goal, the premise facts and each IF-THEN step a one-variable rule. The Figure 9 prompt
is an image; this is its reconstruction (instructions, the "Tom's pancreas" example,
then the explanation). Any causal LM that transformers loads can fill the role
(``--formalizer lm:<hf id or path>``); generation is greedy and batched. Its output goes
through ``prolog_guard`` first: a rejected program is flagged and the explanation falls
back to the deterministic formalization.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ibe_postprocess.formalize import Program
from ibe_postprocess.parsing import ParsedExplanation
from ibe_postprocess.prolog_guard import GuardError, guarded_program

INSTRUCTION = (
    "Convert the premise, the conclusion and the explanation into Prolog. Write the conclusion "
    'as a goal, the premise as facts and each IF-THEN step as a rule "then(X) :- if(X).". '
    "Use predicates with a single argument (injured_pancreas(tom), not intoxicated(X, main)) "
    "and the same constant for the same individual in the goal and in the facts."
)
EXAMPLE = (
    "Premise: Tom's pancreas was injured.\n"
    "Conclusion: He has a high blood sugar level.\n"
    "Explanation:\n"
    "Step 1: IF the pancreas is injured, THEN the pancreas becomes dysfunctional.\n"
    "Step 2: IF the pancreas is dysfunctional, THEN the production of insulin is reduced.\n"
    "Step 3: IF the production of insulin is reduced, THEN the blood sugar level is high.\n"
    "Goal: has_high_blood_sugar(tom).\n"
    "Facts:\n"
    "injured_pancreas(tom).\n"
    "Rules:\n"
    "dysfunctional_pancreas(X) :- injured_pancreas(X).\n"
    "reduced_insulin_production(X) :- dysfunctional_pancreas(X).\n"
    "has_high_blood_sugar(X) :- reduced_insulin_production(X).\n"
)
MAX_NEW_TOKENS = 256


def formalization_prompt(premise: str, conclusion: str, parsed: ParsedExplanation) -> str:
    steps = "\n".join(
        f"Step {index}: IF {step.condition}, THEN {step.consequence}." for index, step in enumerate(parsed.steps, 1)
    )
    return (
        f"{INSTRUCTION}\n\n{EXAMPLE}\n"
        f"Premise: {premise.strip()}\nConclusion: {conclusion.strip()}\nExplanation:\n{steps}\nGoal:"
    )


def program_from_output(text: str, is_system_predicate=None) -> Program:
    """Goal, facts and rules sections of a model's answer, checked by the guard."""
    text = "Goal:" + text.split("\n\n", 1)[0]
    goal = re.search(r"Goal:\s*(.+)", text)
    facts = re.search(r"Facts:\s*\n(.*?)(?=\nRules:|\Z)", text, flags=re.DOTALL)
    rules = re.search(r"Rules:\s*\n(.*)", text, flags=re.DOTALL)
    if goal is None or facts is None:
        raise GuardError("the answer has no 'Goal:' line or no 'Facts:' section")
    clauses = facts.group(1) + "\n" + (rules.group(1) if rules else "")
    return guarded_program(clauses, goal.group(1), is_system_predicate)


class LMFormalizer:
    """A causal LM that writes the Prolog program; CUDA when present."""

    def __init__(self, spec: str, batch_size: int = 8):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.name = spec
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(spec, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        self.model = AutoModelForCausalLM.from_pretrained(spec, dtype=dtype).to(self.device).eval()
        self.batch_size = batch_size

    def generate(self, prompts: Sequence[str]) -> list[str]:
        outputs: list[str] = []
        for start in range(0, len(prompts), self.batch_size):
            batch = self.tokenizer(list(prompts[start : start + self.batch_size]), return_tensors="pt", padding=True)
            batch = batch.to(self.device)
            with self.torch.no_grad():
                generated = self.model.generate(
                    **batch,
                    max_new_tokens=MAX_NEW_TOKENS,
                    do_sample=False,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
            new_tokens = generated[:, batch["input_ids"].shape[1] :]
            outputs.extend(self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
        return outputs
