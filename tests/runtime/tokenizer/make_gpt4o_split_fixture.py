#!/usr/bin/env python3
"""Writes fixtures/gpt4o_llama_cpp_pieces.json: how llama.cpp pre-tokenizes
every fixture string (fixtures/strings.json) under tokenizer.ggml.pre
"gpt-4o" (Phi-4-mini), as piece lengths in bytes, which
reference_unit_test.cpp holds kvframe's split to.

kvframe takes this split from llama.cpp, not from the model's tokenizer.json
(runtime/tokenizer/pre_tokenizer.cpp says why), so the reference is llama.cpp's
own code: its unicode.cpp and unicode-data.cpp compiled with a small driver
that calls unicode_regex_split() with the regex llama-vocab.cpp gives
LLAMA_VOCAB_PRE_TYPE_GPT4O (read from that file here, not copied). The source
is the llama.cpp peer's (bench/peers/build-llama-cpp.sh), compiled by the
system's C++ compiler: llama.cpp runs that regex with std::regex, so its
standard library is part of the reference (libstdc++ here, as for the peer).

  python3 tests/runtime/tokenizer/make_gpt4o_split_fixture.py [--llama-src DIR]
"""
import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

DRIVER = r"""
#include <iostream>
#include <string>
#include <vector>
#include "unicode.h"

// stdin: the regex on one line, then per text its byte count on a line and
// the bytes. stdout: per text a line of its pieces' byte counts.
int main() {
  std::string regex;
  std::getline(std::cin, regex);
  size_t n;
  while (std::cin >> n) {
    std::cin.get();
    std::string text(n, '\0');
    std::cin.read(&text[0], static_cast<std::streamsize>(n));
    const char* sep = "";
    for (const std::string& piece : unicode_regex_split(text, {regex}, false)) {
      std::cout << sep << piece.size();
      sep = " ";
    }
    std::cout << "\n";
  }
}
"""


def gpt4o_regexes(src):
    """The C++ string literals llama-vocab.cpp assigns for LLAMA_VOCAB_PRE_TYPE_GPT4O, unescaped."""
    text = (src / "src/llama-vocab.cpp").read_text(encoding="utf-8")
    case = re.search(r"case LLAMA_VOCAB_PRE_TYPE_GPT4O:.*?regex_exprs = \{(.*?)\};", text, re.S)
    if not case:
        raise SystemExit("no LLAMA_VOCAB_PRE_TYPE_GPT4O regex_exprs in llama-vocab.cpp")
    body = "\n".join(line for line in case.group(1).splitlines() if not line.strip().startswith("//"))
    return [re.sub(r"\\(.)", r"\1", lit) for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', body)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llama-src", type=Path, help="llama.cpp source (default: the peer's)")
    args = parser.parse_args()
    src = args.llama_src
    if src is None:
        bin_dir = subprocess.run([str(REPO / "bench/peers/build-llama-cpp.sh")], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout.strip()
        src = Path(bin_dir).resolve().parents[1]
    regexes = gpt4o_regexes(src)
    if len(regexes) != 1:
        raise SystemExit(f"expected one gpt-4o regex in llama-vocab.cpp, found {len(regexes)}")
    texts = json.loads((HERE / "fixtures/strings.json").read_text(encoding="utf-8"))["texts"]
    with tempfile.TemporaryDirectory() as tmp:
        driver, exe = Path(tmp) / "split.cpp", Path(tmp) / "split"
        driver.write_text(DRIVER)
        subprocess.run(["c++", "-std=c++17", "-O2", "-I", str(src / "src"), str(src / "src/unicode.cpp"),
                        str(src / "src/unicode-data.cpp"), str(driver), "-o", str(exe)], check=True)
        feed = regexes[0].encode() + b"\n" + b"".join(
            str(len(t.encode())).encode() + b"\n" + t.encode() for t in texts)
        out = subprocess.run([str(exe)], input=feed, check=True, stdout=subprocess.PIPE).stdout.decode()
    pieces = [[int(n) for n in line.split()] for line in out.splitlines()]
    assert len(pieces) == len(texts) and all(sum(p) == len(t.encode()) for p, t in zip(pieces, texts))
    fixture = {"about": "Piece lengths in bytes of every fixtures/strings.json text as llama.cpp's "
                        "unicode_regex_split() splits it under tokenizer.ggml.pre gpt-4o. Regenerate with "
                        "make_gpt4o_split_fixture.py.",
               "llama_cpp": src.parents[1].name, "regex": regexes[0], "pieces": pieces}
    out_path = HERE / "fixtures/gpt4o_llama_cpp_pieces.json"
    out_path.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    print(f"{out_path}: {len(texts)} texts, {sum(map(len, pieces))} pieces")


if __name__ == "__main__":
    main()
