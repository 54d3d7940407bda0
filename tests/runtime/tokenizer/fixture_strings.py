"""The strings the tokenizer reference fixtures are made of (>= 500, deterministic).

Imported by make_tokenizer_fixture.py and make_sentencepiece_fixture.py. Kinds:
gamecore JSON, code, prose in eleven scripts, emoji, whitespace runs, numbers,
special-token text, contractions, punctuation, control characters, random
mixes and a few long strings. Every string is valid UTF-8 (a Python str): HF
takes str, so invalid bytes are tested separately, in C++.
"""

import json
import random

NAMES = ["Stormcaller", "Ægir", "Łucja", "李雷", "Ольга", "Δήμητρα", "さくら", "민준", "أحمد", "अर्जुन",
         "สมชาย", "Zoë", "Øystein", "Ñandú", "Ģirts", "🐉 Drake", "O'Brien", "D'Artagnan", "Jean-Luc", "İlkay"]
ITEMS = ["item_swift_boots", "item_sacred_shield", "item_mana_potion", "épée_de_feu", "меч", "魔法の杖", "", None]


def gamecore_json(rng):
    """Game-state snippets: nested objects, number arrays, floats, negatives, unicode names."""
    out = []
    for i in range(150):
        hero = {
            "id": f"hero_{i}",
            "name": rng.choice(NAMES),
            "team": rng.choice(["radiant", "dire"]),
            "level": rng.randint(1, 30),
            "hp": rng.randint(0, 3000),
            "hp_max": 3000,
            "mana": round(rng.uniform(0, 1500), rng.choice([0, 1, 2, 3])),
            "position": {"x": round(rng.uniform(-8000, 8000), 1), "y": round(rng.uniform(-8000, 8000), 1),
                         "z": rng.choice([0, -0.5, 1e-3, -12.75])},
            "alive": rng.random() < 0.8,
            "respawn_ticks": rng.choice([0, None, 450]),
            "damage": [rng.randint(-50, 400) for _ in range(rng.randint(0, 6))],
            "cooldowns": [round(rng.uniform(-1, 90), 2) for _ in range(rng.randint(0, 4))],
            "items": [{"slot": s, "item": rng.choice(ITEMS), "charges": rng.randint(0, 3)}
                      for s in range(rng.randint(0, 3))],
            "gold_delta": rng.randint(-9999, 9999),
            "ratio": rng.choice([0.5, 1.0, 2.5e-7, 123456.789, -3.14159]),
        }
        keys = list(hero)
        rng.shuffle(keys)
        snippet = {k: hero[k] for k in keys[: rng.randint(2, len(keys))]}
        style = i % 5
        if style == 0:
            text = json.dumps(snippet, ensure_ascii=False, separators=(",", ":"))
        elif style == 1:
            text = json.dumps(snippet, ensure_ascii=False, indent=2)
        elif style == 2:
            text = json.dumps(snippet, ensure_ascii=False, indent="\t")
        elif style == 3:
            text = json.dumps(snippet, ensure_ascii=True)
        else:
            text = json.dumps({"tick": rng.randint(0, 10**6), "events": [snippet]}, ensure_ascii=False)
        out.append(text)
    out += [
        '{"match":{"id":"match-00000001","mode":"ranked_5v5","tick":34980,"clock":"19:26","is_day":false}}',
        '{"score":{"radiant":9,"dire":18},"objectives":{"roshan_alive":true,"roshan_respawn_tick":0}}',
        '[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]',
        '[-1.5,-0.25,0.0,0.125,1e10,-2E-5,3.0e+2]',
        '{"a":{"b":{"c":{"d":{"e":[[[]]]}}}}}',
        '{"empty":{},"list":[],"null":null,"t":true,"f":false}',
        '{"name":"\\u00e9\\ud83d\\ude00","path":"C:\\\\games\\\\moba\\\\save.json"}',
        '{ "spaced" : [ 1 , 2 , 3 ] , "key" : "value" }',
    ]
    return out


CODE = [
    "#include <vector>\nint main() {\n  std::vector<int> v{1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n",
    "template <class T>\nT clamp(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }",
    "for (auto& [key, value] : map) {\n\tstd::cout << key << \" => \" << value << '\\n';\n}",
    "static_assert(sizeof(int) == 4, \"int is 32-bit\");",
    "auto ptr = std::make_unique<Hero>(\"Stormcaller\", /*level=*/15);\nptr->attack(target, 1.5f);",
    "if (x != nullptr && *x >= 0x7F) { x->flags |= FLAG_DIRTY; } // check\n",
    "namespace kvframe::runtime {\nclass Tokenizer;\n}  // namespace kvframe::runtime",
    "int a[3][3] = {{1,0,0},{0,1,0},{0,0,1}};\nconst char* s = R\"(raw \\n string)\";",
    "def tokenize(text: str) -> list[int]:\n    \"\"\"Split text.\"\"\"\n    return [ord(c) for c in text if not c.isspace()]\n",
    "class Hero:\n    def __init__(self, name, hp=100):\n        self.name = name\n        self.hp = hp\n\n    def __repr__(self):\n        return f\"Hero({self.name!r}, hp={self.hp})\"\n",
    "import numpy as np\nx = np.linspace(-1.0, 1.0, num=50)\nprint(x @ x.T, x ** 2)",
    "lambda x, *args, **kwargs: {k: v for k, v in kwargs.items() if v is not None}",
    "try:\n    result = 10 / 0\nexcept ZeroDivisionError as e:\n    print('error:', e)\nfinally:\n    pass",
    "async def fetch(session, url):\n    async with session.get(url) as r:\n        return await r.json()",
    "# -*- coding: utf-8 -*-\n__all__ = ['Tokenizer', 'ChatTemplate']",
    "local hero = { name = \"Stormcaller\", hp = 1813, items = {} }\nfunction hero:damage(n)\n  self.hp = math.max(0, self.hp - n)\nend",
    "for i, v in ipairs(units) do\n  if v.team ~= my_team then\n    table.insert(enemies, v)\n  end\nend",
    "-- Lua comment\nlocal s = [[multi\nline]] .. tostring(42) .. '#'",
    "while true do coroutine.yield(nil) end",
    "SELECT name, COUNT(*) AS n FROM heroes WHERE hp > 0 GROUP BY name ORDER BY n DESC;",
    "<div class=\"hp-bar\" style=\"width: 75%\"><span>1813/1950</span></div>",
    "$ cmake -S . -B build -G Ninja && cmake --build build -j2",
    "fn main() { let v: Vec<u32> = (0..10).map(|x| x * x).collect(); println!(\"{:?}\", v); }",
    "x+=1;y-=2;z*=3;w/=4;a%=5;b<<=1;c>>=2;d&=e|f^g;",
    "if(a&&b||!c){return~d;}",
    "    \n    def indented(self):\n        pass\n",
    "// TODO(kvframe): handle CRLF\r\nint x = 0;\r\n",
    "printf(\"%5.2f%%\\n\", 99.5);",
    "arr[i++] = arr[--j] + (k << 2) - (m >> 3);",
    "{{ message['content'] | trim }}{% if loop.last %}<|im_end|>{% endif %}",
]

PROSE = [
    # English
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times.",
    "Stormcaller casts Iron Strike: 300 magic damage to all enemies within 270 units!",
    "Don't panic. You're fine; they've gone, and we'll wait — won't we?",
    "E-mail me at player_one@example.com or visit https://example.com/path?query=1&x=y#frag.",
    # French
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Où est la bibliothèque ? Je l'ai cherchée à côté de l'église, près du château.",
    "L'épée de feu inflige 25 % de dégâts supplémentaires aux créatures élémentaires.",
    # German
    "Über allen Gipfeln ist Ruh, in allen Wipfeln spürest du kaum einen Hauch.",
    "Die Straße ist lang, und der Fußgänger trägt größere Schuhe.",
    "Donaudampfschifffahrtsgesellschaftskapitän",
    # Russian
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Герой получил 150 единиц опыта и новый уровень!",
    "В чащах юга жил бы цитрус? Да, но фальшивый экземпляр!",
    # Greek
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "Καλημέρα κόσμε· ο ήρωας κέρδισε 300 χρυσά νομίσματα.",
    # Chinese
    "我能吞下玻璃而不伤身体。",
    "英雄释放了技能，造成三百点魔法伤害！",
    "北京欢迎你，上海也欢迎你。今天天气很好。",
    # Japanese
    "私はガラスを食べられます。それは私を傷つけません。",
    "勇者は魔法の杖を手に入れた！レベルが上がった。",
    "カタカナとひらがな、そして漢字が混ざった文章です。",
    # Korean
    "나는 유리를 먹을 수 있어요. 그래도 아프지 않아요.",
    "영웅이 레벨 15에 도달했습니다!",
    # Arabic
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني.",
    "حصل البطل على ٣٠٠ قطعة ذهبية.",
    # Hindi
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती।",
    "नायक ने १५ स्तर प्राप्त किया।",
    # Thai
    "ฉันกินกระจกได้ แต่มันไม่ทำให้ฉันเจ็บ",
    "ฮีโร่ได้รับทอง ๓๐๐ เหรียญ",
    # Others
    "Ég get etið gler án þess að meiða mig.",
    "Mogę jeść szkło i mi nie szkodzi. Zażółć gęślą jaźń.",
    "Tôi có thể ăn thủy tinh mà không hại gì.",
    "אני יכול לאכול זכוכית וזה לא מזיק לי.",
    "Pijamalı hasta yağız şoföre çabucak güvendi. İstanbul, ığdır.",
    "ᚠᛇᚻ᛫ᛒᛦᚦ᛫ᚠᚱᚩᚠᚢᚱ᛫ᚠᛁᚱᚪ᛫ᚷᛖᚻᚹᛦᛚᚳᚢᛗ",
    "Combining: e\u0301 a\u0308 n\u0303 (decomposed) vs é ä ñ (composed)",
    "Ligatures ﬁ ﬂ ﬀ and fullwidth ＡＢＣ１２３ and small ᵃᵇᶜ",
    "Math: ∀x∈ℝ, ∃y: x² + y² ≤ 1; ∑ᵢ aᵢ = ∞ ≠ ∅",
]

EMOJI = [
    "😀", "😀😃😄😁", "👍🏽", "👍🏻👍🏼👍🏽👍🏾👍🏿", "👨‍👩‍👧‍👦", "🧑🏽‍💻", "👩‍❤️‍💋‍👨", "🏳️‍🌈", "🏴‍☠️",
    "🇫🇷🇯🇵🇺🇸🇧🇷", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "1️⃣2️⃣#️⃣", "❤️ vs ❤", "GG 🎉🎉🎉 wp", "🐉🔥⚔️🛡️",
    "I ❤️ this game 😂😂", "👋 hello 🌍!", "🤦‍♂️🤷‍♀️", "🫠🫶🪿", "emoji🙂inside🙂words",
    "  😀  ", "😀\n😀", "🦄🌈✨", "👁️‍🗨️", "🧟‍♀️🧛🏻‍♂️",
]

WHITESPACE = [
    " ", "  ", "   ", "    ", " " * 17, "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r", " \n ",
    "\t \n \t", "a b", "a  b", "a   b", "a\tb", "a\t\tb", "a\nb", "a\n\nb", "a\r\nb", " a", "  a", "a ", "a  ",
    "\na", "a\n", " \n\n a", "a \n b", "a\n  b", "a\n\t\tb", "\u00a0", "a\u00a0b", "a\u3000b", "a\u2028b", "a\u2029b",
    "\u2003\u2003x", "a\u200bb", "a\ufeffb", "a\u180eb", "\x0b\x0c", "a\x0bb\x0cc", "a\x1cb\x1fc", "a\x85b",
    "x\u202fy\u205fz", "line1\nline2\r\nline3\rline4", "    indented\n        more\n    back",
    "end with spaces   ", "   start with spaces", "\t\tmixed \t \n\r\n  whitespace\n",
]

NUMBERS = [
    "0", "7", "42", "123", "1234", "12345", "123456", "1234567", "12345678901234567890",
    "3141592653589793238462643383279502884197169399375105820974944592", "1,000,000", "1.000.000,50",
    "3.14159", "-0.0001", "+42", "1e-9", "6.022E23", "0x1F", "0b1011", "007", "v1.2.3", "1/2", "50%",
    "$19.99", "€5", "12:30:45", "2024-07-26", "+1 (555) 123-4567", "a1b2c3", "abc123def456", "x=1,y=-2",
    "١٢٣٤٥", "१२३४५", "①②③", "½ ¼ ¾", "Ⅻ Ⅳ ⅷ", "x² y³", "𝟙𝟚𝟛", "๑๒๓", "〇一二三",
    "12 345 678", "9" * 40, "1 2 3 4 5 6 7 8 9 10", " 1", "  12", "a 123 b 4567",
]

SPECIAL = [
    "<|im_start|>user\nhi<|im_end|>",
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>", "<|endoftext|><|endoftext|>", "text<|endoftext|>more", " <|im_end|> ", "<|im_start|",
    "<|im_start|<|im_end|>", "<|im_end|>>", "<<|im_end|>", "<|im_start|><|im_start|>assistant",
    "<repo_name>kvframe<file_sep>main.cpp", "<filename>a.py\n<gh_stars>100", "<|IM_START|>", "<| im_start |>",
    "<jupyter_code>print(1)<jupyter_output>1<empty_output>", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>",
    "<s>[INST] hello [/INST]</s>", "<|eot_id|>", "<|im_end|>\n<|im_start|>assistant\nSure!",
]

CONTRACTIONS = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "it's", "we've", "don't", "I'm", "you'll", "she'd", "they're",
    "IT'S", "WE'VE", "Don'T", "You'RE", "I'M", "it'ſ", "it’s", "''s", "'''", "rock'n'roll", "O'Neil's",
    "the players' items", "'tis", "y'all'd've", "can't won't shouldn't", "l'homme qu'il s'est dit",
]

PUNCTUATION = [
    "!", "!!!", "?!?!", "...", "…", "---", "–—", "==>", "<=>", "<<<>>>", "@#$%^&*()", "/* comment */", "«»",
    "„quotes“", "“smart” ‘quotes’", "、。「」", "，。！？", "¿Qué?", "¡Hola!", "a.b.c", "a,b;c:d", "(a)[b]{c}",
    "~`|\\", "_-_", "__init__", "&&||", "->", "::", ";;", "\"\"\"", "''", "#!/bin/sh", "...?!", "$$", "%%",
    "**bold**", "~~strike~~", "> quote", "- [ ] task",
]

CONTROL = ["a\x00b", "\x01\x02\x03", "a\x04b", "!\x04!", "x\x06\x13\x14\x16\x1dy", "\x7f", "\x1b[31mred\x1b[0m",
           "tab\x08back", "\u0080\u009f", "bell\x07"]

POOL = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t\n.,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`"
        "éèêàçñüößøåæœÉÀÇ" "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГД" "αβγδεζηθικλμνξοπρστυφχψω" "你好世界中文字符"
        "ひらがなカタカナ" "한국어" "مرحبا" "नमस्ते" "ภาษาไทย" "😀👍🏽🇫🇷❤️" "\u00a0\u3000\u0301\u200b" "１２３①½")


def random_mixes(rng, count):
    out = []
    for _ in range(count):
        n = rng.randint(1, 60)
        out.append("".join(rng.choice(POOL) for _ in range(n)))
    return out


def long_strings(rng):
    return [
        " " * 3000,
        "\n" * 500,
        "9" * 2500,
        "a" * 2000,
        "ab" * 1000,
        "!" * 1500,
        "The quick brown fox jumps over the lazy dog. " * 60,
        "".join(rng.choice("abcdefghij ") for _ in range(4000)),
        json.dumps([{"x": rng.uniform(-1e4, 1e4), "id": i} for i in range(120)]),
    ]


def fixture_strings():
    rng = random.Random(20240726)
    strings = (gamecore_json(rng) + CODE + PROSE + EMOJI + WHITESPACE + NUMBERS + SPECIAL + CONTRACTIONS +
               PUNCTUATION + CONTROL + random_mixes(rng, 150) + long_strings(rng) + [""])
    seen = set()
    unique = []
    for s in strings:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique
