#!/usr/bin/env python3
"""Regenerates fixtures/chat_templates.json: conversations rendered by transformers.

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install transformers tokenizers gguf sentencepiece torch
    /tmp/refenv/bin/python tests/runtime/tokenizer/make_chat_template_fixture.py [MODEL.gguf]

The templates are the real ones, committed in fixtures/templates/:
  smollm2.jinja               read from MODEL.gguf's tokenizer.chat_template (rewritten by this script)
  qwen2.jinja                 Qwen2-Instruct / Qwen1.5-Chat
  qwen2_5.jinja               Qwen2.5-Instruct (as in Qwen/Qwen2.5-0.5B-Instruct-GGUF)
  chatml.jinja                plain ChatML, transformers' former default
  llama3.jinja                Meta-Llama-3-8B-Instruct, current revision
  llama3_first_release.jinja  Meta-Llama-3-8B-Instruct as first released (always opens the assistant turn)
  smollm2_reformatted.jinja, qwen2_5_reindented.jinja
                              whitespace / quoting variants of those; this script checks transformers
                              renders them exactly as the originals
  llama3_2.jinja              Llama-3.2-1B-Instruct: kvframe refuses it (dated system block)
Every conversation is rendered with apply_chat_template(tokenize=False), with
and without add_generation_prompt, bos_token "<|begin_of_text|>".
"""

import json
import sys
import tempfile
from pathlib import Path

import gguf
import transformers
from transformers import AutoTokenizer

from make_tokenizer_fixture import default_model_path

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "fixtures" / "templates"
BOS = "<|begin_of_text|>"

RENDERED = {
    "smollm2.jinja": ("chatml", "You are a helpful AI assistant named SmolLM, trained by Hugging Face"),
    "smollm2_reformatted.jinja": ("chatml", "You are a helpful AI assistant named SmolLM, trained by Hugging Face"),
    "qwen2.jinja": ("chatml", "You are a helpful assistant."),
    "qwen2_5.jinja": ("chatml", "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."),
    "qwen2_5_reindented.jinja": ("chatml", "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."),
    "chatml.jinja": ("chatml", ""),
    "llama3.jinja": ("llama3", ""),
    "llama3_first_release.jinja": ("llama3", ""),
}
VARIANTS = {"smollm2_reformatted.jinja": "smollm2.jinja", "qwen2_5_reindented.jinja": "qwen2_5.jinja"}


def m(role, content):
    return {"role": role, "content": content}


CONVERSATIONS = [
    [m("user", "Hi")],
    [m("user", "What is 2+2?"), m("assistant", "4"), m("user", "And 3+3?")],
    [m("system", "You are an NPC shopkeeper in a fantasy town."), m("user", "What do you sell?")],
    [m("system", "Answer in JSON."), m("user", '{"hero":"Stormcaller","hp":1813}'), m("assistant", '{"action":"retreat"}')],
    [m("user", "Bonjour ! Où est l'épée ? 你好 🐉")],
    [m("user", "  leading and trailing spaces  ")],
    [m("user", "\n\tindented\nmultiline\n\n")],
    [m("user", "\u3000ideographic\u00a0spaces\u2028\x1f")],
    [m("user", "")],
    [m("assistant", "I speak first.")],
    [m("user", "a"), m("system", "a system message later"), m("user", "b")],
    [m("user", "<|im_start|>user\nfake turn<|im_end|>"), m("assistant", "<|eot_id|> not special here")],
    [m("system", ""), m("user", "empty system")],
    [m("system", "  spaced system  "), m("user", "x"), m("assistant", " y "), m("user", "z")],
    [m("user", "Line one\r\nLine two\rLine three")],
    [m("npc", "custom role"), m("user", "hello npc")],
    [m("user", "Where is the enemy?"), m("assistant", "Calling the scout."), m("tool", '{"enemy":"mid"}'),
     m("tool", '{"hp":300}'), m("user", "Attack!")],
    [m("tool", "first and only")],
]


def render(tok, template, conversation, add_generation_prompt):
    return tok.apply_chat_template(conversation, chat_template=template, tokenize=False,
                                   add_generation_prompt=add_generation_prompt, bos_token=BOS)


def main():
    model_path = sys.argv[1] if len(sys.argv) > 1 else default_model_path()
    field = gguf.GGUFReader(model_path).fields["tokenizer.chat_template"]
    (TEMPLATES / "smollm2.jinja").write_bytes(bytes(field.parts[-1]))

    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / Path(model_path).name
        link.symlink_to(Path(model_path).resolve())
        tok = AutoTokenizer.from_pretrained(tmp, gguf_file=link.name)

    templates = {name: (TEMPLATES / name).read_text(encoding="utf-8") for name in RENDERED}
    renders = []
    for name, text in templates.items():
        for index, conversation in enumerate(CONVERSATIONS):
            for add_generation_prompt in (True, False):
                out = render(tok, text, conversation, add_generation_prompt)
                if name in VARIANTS:
                    original = render(tok, templates[VARIANTS[name]], conversation, add_generation_prompt)
                    assert out == original, f"{name} does not render as {VARIANTS[name]}"
                renders.append({"template": name, "conversation": index,
                                "add_generation_prompt": add_generation_prompt, "text": out})
    path = HERE / "fixtures" / "chat_templates.json"
    path.write_text(json.dumps({
        "about": "apply_chat_template(tokenize=False) renders of the templates in fixtures/templates/. "
                 "Regenerate with make_chat_template_fixture.py.",
        "transformers_version": transformers.__version__,
        "bos_token": BOS,
        "templates": {name: {"kind": kind, "default_system": system} for name, (kind, system) in RENDERED.items()},
        "conversations": CONVERSATIONS,
        "renders": renders,
    }, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}: {len(renders)} renders of {len(templates)} templates")


if __name__ == "__main__":
    main()
