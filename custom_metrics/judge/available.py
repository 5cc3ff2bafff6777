"""Can this judge be used here? Checked in seconds, before any model of the run is asked.

A judge that cannot load (a missing folder, a Hub id not cached on an offline node, a server that
is down) used to be found after a whole generation run. Each check names the judge, what failed
and what to pass instead; loading the model is the caller's next step (``reg.preflight``).
"""

from __future__ import annotations

from pathlib import Path

from custom_metrics.common.settings import offline_variable
from custom_metrics.judge.http_client import EndpointError, JSONClient, Limits
from custom_metrics.judge.spec import JudgeSpec

ENDPOINT_TIMEOUT_S = 10
MODEL_LIST_MAX_BYTES = 1024 * 1024  # GET /models: a list of model names, far below this
MODEL_FILE = "config.json"  # what every transformers checkpoint folder holds
_EXAMPLES = {
    "lm": "lm:Qwen/Qwen3-8B or lm:/path/to/checkpoint",
    "seqcls": "seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli or seqcls:/path/to/checkpoint",
}


class JudgeUnavailable(ValueError):
    """The judge cannot be used here; the message names it, what failed and what to pass."""


def check_available(spec: JudgeSpec) -> None:
    """Raise ``JudgeUnavailable`` unless the judge's model folder, Hub id or endpoint is there."""
    if spec.kind == "openai":
        _check_endpoint(spec)
    elif spec.model.startswith(("/", "./", "../", "~")) or Path(spec.model).expanduser().exists():
        _check_folder(spec)
    else:
        _check_hub_id(spec)


def _check_folder(spec: JudgeSpec) -> None:
    from custom_metrics.common.embedded_model import checkpoint_dir, ensure_checkpoint

    folder = Path(spec.model).expanduser()
    if folder == checkpoint_dir():
        ensure_checkpoint()  # the embedded model is written on first use (a minute, once)
    if not folder.is_dir():
        raise JudgeUnavailable(
            f"judge {spec.name}: there is no folder {folder}. Pass the folder of a saved checkpoint "
            f"(it holds {MODEL_FILE} and the weights), or a Hugging Face id, e.g. {_EXAMPLES[spec.kind]}."
        )
    if not (folder / MODEL_FILE).is_file():
        raise JudgeUnavailable(
            f"judge {spec.name}: folder {folder} holds no {MODEL_FILE}, so it is no checkpoint. Pass "
            f"the folder that save_pretrained wrote, or a Hugging Face id, e.g. {_EXAMPLES[spec.kind]}."
        )


def _check_hub_id(spec: JudgeSpec) -> None:
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(spec.model)
    except HFValidationError as err:
        raise JudgeUnavailable(
            f"judge {spec.name}: {spec.model!r} is neither an existing folder nor a Hugging Face id "
            f"({err}). Pass a checkpoint folder that exists or an id such as {_EXAMPLES[spec.kind]}."
        ) from err
    offline = offline_variable()
    if offline and not isinstance(try_to_load_from_cache(spec.model, MODEL_FILE), str):
        raise JudgeUnavailable(
            f"judge {spec.name}: {spec.model} is not in the local Hugging Face cache and {offline}=1 "
            f"forbids downloading it. Download it where there is network (`hf download {spec.model}`, same "
            f"HF_HOME), or pass a local checkpoint folder ({spec.kind}:/path/to/checkpoint)."
        )


def _check_endpoint(spec: JudgeSpec) -> None:
    url = f"{spec.base_url}/models"
    limits = Limits(ENDPOINT_TIMEOUT_S, MODEL_LIST_MAX_BYTES, retries=0, timeout_set_by="the availability check's")
    client = JSONClient(f"judge {spec.name}", limits)
    try:
        listing = client.request("GET", url, None, {}, None)
    except EndpointError as err:
        if err.status in (401, 403):  # a server that wants a key still answered: it is up
            return
        if err.status is not None:
            raise JudgeUnavailable(
                f"judge {spec.name}: GET {url} answered HTTP {err.status}. Check that {spec.base_url} is "
                "the server's OpenAI-compatible base URL (it usually ends in /v1)."
            ) from err
        raise JudgeUnavailable(
            f"judge {spec.name}: no answer from GET {url} ({err.reason}). Start the judge's server (e.g. "
            f"`vllm serve {spec.model} --port 8000`) or pass the base URL where it runs: "
            f"openai:{spec.model}@http://<host>:<port>/v1."
        ) from err
    finally:
        client.close()
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        raise JudgeUnavailable(
            f"judge {spec.name}: GET {url} answered {str(listing)[:200]!r}, not an OpenAI model list; "
            "pass the server's OpenAI-compatible base URL (it usually ends in /v1)."
        )
