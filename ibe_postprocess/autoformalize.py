"""Optional LLM autoformalization (the paper's Appendix A.3, Figure 9).

The paper has GPT-3.5 translate each explanation into Prolog: the conclusion becomes a
goal, the premise facts and each IF-THEN step a one-variable rule. The Figure 9 prompt
is an image; this is its reconstruction (instructions, the "Tom's pancreas" example,
then the explanation). Two kinds of formalizer fill the role, both greedy and batched:

- ``lm:<hf id or path>``: any causal LM that transformers loads, in process; it continues
  the prompt after "Goal:" (``program_from_output``).
- ``openai:<model>@<base_url>``: an OpenAI-compatible chat endpoint (the paper's GPT-3.5,
  vLLM, ``transformers serve``), the prompt as the user message, temperature 0, at most 256
  new tokens; its whole answer is read (``program_from_answer``: a reasoning trace, code
  fences, markdown around the section labels and prose around the program are dropped).
  Options after ``?``: ``max_tokens``, ``concurrency`` (requests in flight, default 8),
  ``timeout`` (seconds for each batch of ``--batch-size`` requests together, every retry and
  wait included, default 300) and ``key_env`` (the variable holding the API key, default
  ``OPENAI_API_KEY``). The server is asked for its model list before the first
  request, so one that is down stops ``ibe score`` in seconds. Requests go through the
  suite's one bounded client (``custom_metrics.judge.http_client``): a server that never
  ends its answer, trickles it or sends megabytes stops the run with one line by the deadline,
  having read no more than the body bound, and the answer is cut before it is cached.

Either's output goes through ``prolog_guard`` first: a rejected program is flagged and the
explanation falls back to the deterministic formalization. Outputs are cached batch by batch
in the features folder (``features``): a rerun sends no request and loads no model.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from custom_metrics.common.errors import DataError
from custom_metrics.judge.answer import cut_answer
from custom_metrics.judge.available import MODEL_LIST_MAX_BYTES
from custom_metrics.judge.http_client import Deadline, EndpointError, JSONClient, Limits, body_bound
from ibe_postprocess.formalize import Program
from ibe_postprocess.judge_answer import without_trace
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
REQUEST_TIMEOUT_S = 300  # one batch's requests together, every attempt and wait included (?timeout=)


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


_SECTIONS = ("goal", "facts", "rules")
# A section label on its own line, markdown around it tolerated: "Goal:", "**Facts:**", "### Rules".
_LABEL = re.compile(r"^[ \t#>*_-]*(goal|facts|rules)[ \t*_]*(?::[ \t*_]*|$)(.*)$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```")


def program_from_answer(text: str, is_system_predicate=None) -> Program:
    """A chat model's whole answer, read line by line: everything before the first section label
    (prose, "Here is the program:") and a reasoning trace are dropped, code-fence lines and
    blank lines inside the program skipped; the program ends at the first blank line after a
    rule (what follows is commentary). The clauses then go through the guard, as the LM's."""
    answer = without_trace(text)
    if answer is None:
        raise GuardError("the answer ends inside its reasoning trace (<think> without </think>)")
    found: dict[str, list[str]] = {name: [] for name in _SECTIONS}
    section = None
    for line in answer.replace("\r\n", "\n").split("\n"):
        label = _LABEL.match(line)
        if label:
            section = label[1].lower()
            line = label[2]
        elif _FENCE.match(line):
            continue
        if not line.strip():
            if section == "rules" and found["rules"]:
                break
            continue
        if section is not None:
            found[section].append(line.strip())
    if not found["goal"]:
        raise GuardError("the answer has no 'Goal:' line")
    if len(found["goal"]) > 1:
        raise GuardError(f"the answer's goal is {len(found['goal'])} lines, not one query")
    return guarded_program("\n".join(found["facts"] + found["rules"]), found["goal"][0], is_system_predicate)


@dataclass(frozen=True)
class EndpointSpec:
    """``openai:<model>@<base_url>[?max_tokens=N&concurrency=N&timeout=S&key_env=NAME]``, checked when parsed."""

    model: str
    base_url: str
    max_tokens: int = MAX_NEW_TOKENS
    concurrency: int = 8
    key_env: str = "OPENAI_API_KEY"
    timeout: int = REQUEST_TIMEOUT_S

    @property
    def name(self) -> str:
        """What its outputs depend on (the cache key, and what rows record): not the speed options."""
        return f"openai:{self.model}@{self.base_url}?max_tokens={self.max_tokens}"


ENDPOINT_PREFIX = "openai:"
CHECK_TIMEOUT_S = 10  # the model list before any work: a server that does not answer fails in seconds
_ENDPOINT_USAGE = "--formalizer openai:<model>@<base_url>[?max_tokens=N&concurrency=N&timeout=S&key_env=NAME]"


def parse_endpoint(spec: str) -> EndpointSpec:
    """The endpoint formalizer a ``--formalizer openai:...`` value names; ValueError saying what is wrong."""
    target, _, query = spec.removeprefix(ENDPOINT_PREFIX).partition("?")
    model, at, base_url = target.partition("@")
    if not at or not model or not base_url.startswith(("http://", "https://")):
        raise ValueError(
            f"--formalizer {spec}: expected {_ENDPOINT_USAGE}, e.g. openai:gpt-3.5-turbo@https://api.openai.com/v1"
        )
    options: dict[str, int | str] = {}
    for item in query.split("&") if query else []:
        key, eq, value = item.partition("=")
        if key in ("max_tokens", "concurrency", "timeout") and eq and value.isdigit() and int(value) > 0:
            options[key] = int(value)
        elif key == "key_env" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            options[key] = value
        else:
            raise ValueError(
                f"--formalizer {spec}: option {item!r} is not understood; expected {_ENDPOINT_USAGE} "
                "(positive whole numbers, a variable name)"
            )
    return EndpointSpec(model, base_url.rstrip("/"), **options)


class EndpointFormalizer:
    """An OpenAI-compatible chat endpoint that writes the Prolog program, through the suite's one
    bounded client (see the module docstring); its body bound is a few times what ``max_tokens``
    can take, and the key is read from the environment at each request, never stored."""

    def __init__(self, spec: EndpointSpec):
        self.spec = spec
        self.name = spec.name
        self.url = f"{spec.base_url}/chat/completions"
        self.who = f"--formalizer {spec.name}"
        self.client = JSONClient(
            self.who, Limits(spec.timeout, body_bound(spec.max_tokens), timeout_set_by="?timeout=")
        )

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.spec.key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def check(self) -> None:
        """Ask the server for its models: a server that is down, a wrong URL or a refused key fails
        here, before any work."""
        limits = Limits(CHECK_TIMEOUT_S, MODEL_LIST_MAX_BYTES, retries=1, timeout_set_by="the check's")
        client = JSONClient(self.who, limits)
        try:
            client.request("GET", f"{self.spec.base_url}/models", None, self._headers(), None)
        except EndpointError as err:
            if err.status in (401, 403):
                raise DataError(
                    f"{self.who}: {self.spec.base_url} refused the API key (HTTP {err.status}); set "
                    f"${self.spec.key_env} to its key (or name another variable with ?key_env=NAME)."
                ) from err
            raise DataError(
                f"{self.who}: no model list from {self.spec.base_url}/models ({err.reason}); start the server or "
                "pass its OpenAI-compatible base URL (it usually ends in /v1)."
            ) from err
        finally:
            client.close()

    def _answer(self, prompt: str, deadline: Deadline) -> str:
        payload = {
            "model": self.spec.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": self.spec.max_tokens,
        }
        try:
            response = self.client.post(self.url, payload, self._headers(), deadline)
        except EndpointError as err:
            raise DataError(
                f"{err}; the answers of finished batches are cached, so a rerun resumes where this one stopped."
            ) from err
        choices = response.get("choices") if isinstance(response, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        # No answer: the guard rejects it, the row says so. A long one is cut before the cache keeps it.
        return cut_answer(content, self.spec.max_tokens) if isinstance(content, str) else ""

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """One batch's answers, all by one deadline (``timeout``). A deadline per request let a
        server that trickles each answer just within it hold ``ibe score`` for as many timeouts
        as the batch has rounds of ``concurrency`` requests (past 420 s at a byte a second)."""
        what = f"its timeout of {self.spec.timeout:g} s for a batch of {len(prompts)} request(s) (?timeout=)"
        deadline = Deadline(time.monotonic() + self.spec.timeout, what)
        with ThreadPoolExecutor(max_workers=self.spec.concurrency) as pool:
            return list(pool.map(lambda prompt: self._answer(prompt, deadline), prompts))


class LMFormalizer:
    """A causal LM that writes the Prolog program; CUDA when present."""

    def __init__(self, spec: str, batch_size: int = 8):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
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
