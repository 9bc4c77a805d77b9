"""The safetensors export of an embedded GGUF (``factscore_local.lm.export_hf``), the folder
vLLM serves: the same weights, tokenizer and chat template as the GGUF, written once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from factscore_local.lm.export_hf import STAMP, WEIGHTS, export_hf, is_current, main


def test_a_folder_with_other_files_is_refused_before_any_work(tmp_path, capsys):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"not read: the folder is checked first")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="holds files that are not an export"):
        export_hf(gguf, out)
    assert main([str(gguf), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert (out / "notes.txt").read_text() == "keep me"  # nothing lost
    assert main([str(tmp_path / "missing.gguf"), str(tmp_path / "o")]) == 2
    assert "neither an embedded model" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a GGUF file"):
        export_hf(tmp_path, tmp_path / "o")  # a folder needs no export
    with pytest.raises(ValueError, match="unknown dtype 'int8'"):
        export_hf(gguf, tmp_path / "o", dtype="int8")


# minutes (a float32 copy of the 0.5B and transformers' own load of the GGUF); in CI the
# export is exercised by tests/test_vllm_server.py, whose decisions must agree with the GGUF's
@pytest.mark.heavy
def test_the_export_holds_the_ggufs_weights_and_tokenizer_and_is_written_once(tmp_path):
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    from factscore_local.lm import load_lm
    from factscore_local.lm.server_vocab import GGUFVocab, HFVocab
    from factscore_local.model_store import EMBEDDED_MODELS, SMALL_LM, installed_path

    # the reference: transformers' own load of the GGUF (conftest's hf_small_lm is the export)
    hf_small_lm = load_lm(SMALL_LM, backend="transformers", threads=2, device="cpu")

    out = tmp_path / "export"
    said: list[str] = []
    assert export_hf(SMALL_LM, out, log=said.append) == out
    stamp = json.loads((out / STAMP).read_text())
    assert stamp["gguf_sha256"] == EMBEDDED_MODELS[SMALL_LM].sha256
    assert stamp["dtype"] == "float32" and set(stamp["files"]) >= {WEIGHTS, "config.json"}
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and config["architectures"] == ["Qwen2ForCausalLM"]
    assert not (out / "generation_config.json").exists()  # no sampling defaults for a server
    assert not list(tmp_path.glob(".export.partial-*"))

    # every tensor is the GGUF's dequantized value, exactly
    reference = hf_small_lm.model.state_dict()
    with safe_open(str(out / WEIGHTS), "pt") as f:
        names = set(f.keys())
        assert names == set(reference) - (
            {"lm_head.weight"} if config["tie_word_embeddings"] else set()
        )
        for name in names:
            assert torch.equal(f.get_tensor(name), reference[name]), name
    # read back by transformers from the folder alone: the same logits
    folder = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32, local_files_only=True)
    ids = torch.tensor(
        [hf_small_lm.tokenizer("Ada Lovelace wrote the first program.")["input_ids"]]
    )
    with torch.no_grad():
        assert torch.equal(folder(ids).logits, hf_small_lm.model(ids).logits)
    del folder

    # the tokenizer and chat template: the GGUF's own (what a server's prompts are cut by)
    gguf, hf = GGUFVocab(installed_path(SMALL_LM)), HFVocab(str(out))
    prompt = gguf.chat("Evidence: Ada Lovelace (1815–1852) wrote notes.\n\nTrue or False?")
    assert hf.chat("Evidence: Ada Lovelace (1815–1852) wrote notes.\n\nTrue or False?") == prompt
    assert hf.prompt_ids(prompt) == gguf.prompt_ids(prompt)
    assert hf.tokenize(" Ada wrote notes") == gguf.tokenize(" Ada wrote notes")

    # a second export of the same GGUF writes nothing; another digest or dtype is not current
    mtime = (out / WEIGHTS).stat().st_mtime_ns
    said.clear()
    assert export_hf(SMALL_LM, out, log=said.append) == out
    assert said == [f"export: {out} already holds {SMALL_LM}.gguf in float32"]
    assert (out / WEIGHTS).stat().st_mtime_ns == mtime
    assert is_current(out, stamp["gguf_sha256"], "float32")
    assert not is_current(out, "0" * 64, "float32") and not is_current(
        out, stamp["gguf_sha256"], "bfloat16"
    )
    # the module's command line prints the folder (what scripts and the guide read)
    cmd = [sys.executable, "-m", "factscore_local.lm.export_hf", SMALL_LM, str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == str(out), done.stderr[-2000:]
