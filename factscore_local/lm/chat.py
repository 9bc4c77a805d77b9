"""A user turn in a model's own chat template (the GGUF's Jinja template, rendered in a
sandbox), for backends that have no tokenizer of their own to apply it."""

from __future__ import annotations

import functools


def render_chat(template: str | None, user: str, bos: str = "", eos: str = "") -> str:
    """A user turn plus the assistant's opening, with the model's own chat template."""
    if not template:
        return user
    return _compiled_template(template).render(
        messages=[{"role": "user", "content": user}],
        add_generation_prompt=True,
        bos_token=bos,
        eos_token=eos,
    )


@functools.lru_cache(maxsize=8)
def _compiled_template(template: str):
    """A chat template compiled once: compiling Qwen2.5's takes ~6 ms, rendering it ~10 µs,
    and a run renders a prompt per fact (py-spy: 13% of the samples of a verification run's
    first 20 s were spent compiling it again for each prompt)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)
