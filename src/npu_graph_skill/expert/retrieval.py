"""Bilingual keyword retrieval in the standard library: a tokenizer for mixed Chinese/English/code
text and a BM25F index over weighted fields.

Tokens:
- Latin words and identifiers. `capture_begin`, `aclmdlRICaptureBegin`, `NPUGraph::replay`,
  `TORCH_NPU_LOGS`, `107027`, `0x7020023`, `ERR00100`, `P-CAP-001` stay whole (lower-cased) and
  are also split on `::` `.` `-` `_` and camelCase, so `aclmdlRICaptureBegin` also yields
  `aclmdl`, `ri`, `captur`, `begin`. Plain words get a light English stemmer (captures, captured,
  capturing → captur).
- Chinese runs are cut at particles, pronouns and stop words (的, 我, 时候, 麻烦 ...), and each piece
  becomes character bigrams (a lone character stays a unigram); every domain
  term found in the run (捕获, 重放, 内存池, 流 ...) also yields its English token, so a Chinese
  question meets English text and the other way round. The same tokenizer runs on documents and
  questions, which keeps the mapping symmetric.
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# Chinese domain terms → the English words they mean; both go through `word_token`, so 分配 and
# "allocation" meet on one token. Longer terms are matched as well as the shorter ones inside
# them (内存池 gives pool and memory).
ZH_TERMS_WORDS: Dict[str, Tuple[str, ...]] = {
    "捕获": ("capture",), "抓图": ("capture",), "录制": ("capture", "record"), "录图": ("capture",),
    "重放": ("replay",), "回放": ("replay",), "执行": ("execute",),
    "更新": ("update",), "参数更新": ("update", "parameter"),
    "重置": ("reset",), "释放": ("release",), "销毁": ("destroy",), "析构": ("destructor",),
    "内存池": ("pool", "memory"), "显存池": ("pool", "memory"), "内存": ("memory",), "显存": ("memory",),
    "池": ("pool",), "共享": ("share",), "私有": ("private",), "分配": ("allocate",), "申请": ("allocate",),
    "流": ("stream",), "默认流": ("default", "stream"), "侧流": ("side", "stream"), "多流": ("multiple", "stream"),
    "图模式": ("graph", "mode"), "图": ("graph",), "模式": ("mode",), "图树": ("tree", "graph"),
    "日志": ("log",), "开关": ("switch",), "打开": ("enable",), "开启": ("enable",), "级别": ("level",),
    "环境变量": ("environment", "variable"), "变量": ("variable",),
    "报错": ("error",), "错误": ("error",), "错误码": ("error", "code"), "码": ("code",),
    "异常": ("exception",), "失败": ("fail",), "警告": ("warning",),
    "约束": ("constraint",), "限制": ("limit", "constraint"), "规则": ("rule",), "设计稿": ("brief",),
    "同步": ("sync",), "嵌套": ("nested",), "线程": ("thread",), "多线程": ("thread",),
    "随机": ("random", "rng"), "随机数": ("random", "rng"), "种子": ("seed",), "生成器": ("generator",),
    "条件": ("condition", "cond"), "分支": ("branch",), "控制流": ("control", "flow"),
    "主机": ("host",), "回调": ("callback",), "打印": ("print",), "保存": ("save",), "导出": ("dump",),
    "预热": ("warmup",), "形状": ("shape",), "动态": ("dynamic",), "动态形状": ("dynamic", "shape"),
    "编译": ("compile",), "后端": ("backend",), "版本": ("version",), "区别": ("difference",), "差异": ("difference",),
    "内部": ("internal",), "实现": ("implementation",), "源码": ("source",), "检查": ("check",), "校验": ("check",),
    "算子": ("op", "operator"), "通信": ("hccl", "collective"), "集合通信": ("hccl", "collective"),
    "超级": ("super",), "融合": ("fusion",), "优化": ("optimize",),
    "序列长度": ("seq", "length"), "长度": ("length",), "参数": ("parameter",),
    "生命周期": ("lifecycle",), "入口": ("entry",), "训练": ("training",), "反向": ("backward",), "推理": ("inference",),
    "超时": ("timeout",), "卡死": ("hang",), "性能": ("performance",), "慢": ("slow",),
    "设备": ("device",), "驱动": ("driver",), "注意力": ("attention",),
    # the words of a fault users write in Chinese
    "填充": ("padding",), "补齐": ("padding",), "元数据": ("metadata",), "静态": ("static",), "地址": ("address",),
    "指针": ("pointer",), "卡住": ("hang",), "挂起": ("hang",), "挂死": ("hang",), "死锁": ("deadlock",),
    "乱码": ("garbled",), "精度": ("accuracy",), "重复": ("repeat",), "批": ("batch",), "档位": ("size",),
    "投机": ("speculative",), "投机推理": ("speculative",), "草稿": ("draft",), "事件": ("event",),
    "拷贝": ("copy",), "复制": ("copy",), "异步": ("async",), "固件": ("firmware",), "内核": ("kernel",),
    "缓存": ("cache",), "断图": ("break", "graph"), "重编译": ("recompile",), "权重": ("weight",),
    "溢出": ("overflow",), "越界": ("bound", "index"), "非法": ("illegal",), "进程": ("process",),
    "泄漏": ("leak",), "泄露": ("leak",), "不一致": ("mismatch",), "无效": ("invalid",), "输出": ("output",),
}
# Question words and glue that carry no topic; greetings; the words of a report's form (issue and PR
# templates: python, issue, expected, reproduce, motivation ...), which its fault does not use.
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does doing for from had has have how i if in
into is it its me my of on or our please so than that the their them then there these this those
to too us was we were what when where which who whom why will with would you your yet also any
get got use using used need want tell explain mean means happen happens work works inside about
should shall while allow allowed possible able way ways thing things something anything ok okay there
hi hello hey dear thanks thank thx anyone anybody someone help advance appreciate appreciated regards
folks guys everyone everybody
python issue issues pr test tests result results expected expect reproduce reproduction
info detail details summary motivation modification modifications behavior behaviour describe
description checklist
""".split())
# English words that say the same thing in this domain, folded onto the first word's token.
EN_SYNONYM_WORDS: Dict[str, Tuple[str, ...]] = {
    "multiple": ("several", "many", "multi", "multistream"),
    "enable": ("turn", "switch", "activate"),
    "release": ("free", "freed", "destroy", "destroyed", "teardown"),
    "nested": ("nest", "nesting"),
    "capture": ("recapture",),
    "allocate": ("allocation", "allocations", "allocating", "allocated", "alloc"),
    "error": ("err",),
    "fail": ("failure", "failed", "failing", "crash", "broken"),
}
ZH_STOPWORDS = frozenset("什么 怎么 如何 为什 什么 么是 是什 哪里 哪些 在哪 怎样 可以 能不 不能 一下 的是 我的 我们 请问 么做 做了 了什 里做 么打 么共 么用 吗 呢 的 了 是 在 和 与 及 麻烦 大家 各位 帮忙 谢谢 感谢 请教 遇到 下面 如下 时候 求助 你好 您好 大佬".split())
# Particles and pronouns: never part of a technical term. A Chinese run is cut at them and at the
# stop words before it becomes bigrams, so the asker's own phrasing (运行的时候遇到下面的报错) gives no
# bigrams across word boundaries (的时, 候遇, 到下): in a corpus mostly in English every Chinese bigram
# is rare, and such a bigram would weigh like a rare technical word.
ZH_GLUE = "的了吗呢吧啊呀哦嘛么我你您他她它这那们"
_ZH_CUT_RE = re.compile("|".join(sorted((w for w in ZH_STOPWORDS if len(w) > 1), key=len, reverse=True))
                        + f"|[{ZH_GLUE}]")

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"([{_CJK}]+)|([A-Za-z0-9_][A-Za-z0-9_.:+\-]*)")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SEGMENT_SPLIT_RE = re.compile(r"::|[.:+\-]+")


def stem(word: str) -> str:
    """A light English stemmer for plain words (identifiers and codes are left alone)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss")):
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # logging → logg → log
            return word
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


_SYNONYMS: Dict[str, str] = {stem(v): stem(k) for k, values in EN_SYNONYM_WORDS.items() for v in values}


@functools.lru_cache(maxsize=65536)
def word_token(word: str) -> str:
    """A plain lower-case word → its index token: stemmed, then folded onto its synonym."""
    token = stem(word)
    return _SYNONYMS.get(token, token)


ZH_TERMS: Dict[str, Tuple[str, ...]] = {zh: tuple(word_token(w) for w in words) for zh, words in ZH_TERMS_WORDS.items()}
_ZH_MAX_TERM = max(len(term) for term in ZH_TERMS)


@functools.lru_cache(maxsize=65536)
def _latin_tokens(raw: str) -> Tuple[str, ...]:
    token = raw.strip(".:+-_")
    if not token:
        return ()
    whole = token.lower()
    out: List[str] = []
    is_plain = whole.isalpha() and (token.islower() or token.isupper() or token[:1].isupper() and token[1:].islower())
    if is_plain:
        if whole not in STOPWORDS and len(whole) > 1:
            out.append(word_token(whole))
        return tuple(out)
    if len(whole) > 1:
        out.append(whole)  # the identifier or code as written
    for segment in _SEGMENT_SPLIT_RE.split(token):  # NPUGraph::capture_begin → NPUGraph, capture_begin
        if len(segment) > 1 and segment.lower() != whole and not segment.isalpha():
            out.append(segment.lower())
        for part in segment.split("_"):  # capture_begin → capture, begin
            if not part:
                continue
            pieces = _CAMEL_RE.findall(part) if not part.isdigit() else [part]
            for piece in [part] + (pieces if len(pieces) > 1 else []):
                low = piece.lower()
                if len(low) < 2 or low in STOPWORDS or low == whole:
                    continue
                out.append(word_token(low) if low.isalpha() else low)
    return tuple(dict.fromkeys(out))


def _cjk_tokens(run: str) -> List[str]:
    out: List[str] = []
    for piece in _ZH_CUT_RE.split(run):
        if len(piece) == 1:
            if piece not in ZH_STOPWORDS:
                out.append(piece)
        else:
            out.extend(piece[i:i + 2] for i in range(len(piece) - 1))
    for i in range(len(run)):
        for size in range(1, min(_ZH_MAX_TERM, len(run) - i) + 1):
            mapped = ZH_TERMS.get(run[i:i + size])
            if mapped:
                out.extend(mapped)
    return out


def tokenize(text: str) -> List[str]:
    """Mixed Chinese / English / identifier text → index tokens (see the module docstring)."""
    return list(_tokenize(text or ""))


@functools.lru_cache(maxsize=8)  # one question is tokenized for the search, the coverage and the id lookup
def _tokenize(text: str) -> Tuple[str, ...]:
    tokens: List[str] = []
    for cjk, latin in _TOKEN_RE.findall(text):
        tokens.extend(_cjk_tokens(cjk) if cjk else _latin_tokens(latin))
    return tuple(tokens)


# --------------------------------------------------------------------------------------------
# BM25F
# --------------------------------------------------------------------------------------------

class BM25Index:
    """BM25F over documents made of named fields: each field's term counts are normalised by that
    field's length against its average (so a long explanation does not mute a matching title),
    weighted, summed, then saturated once. Documents are `(key, {field: text})`; `search` returns
    `(key, score, matched terms)`.
    """

    def __init__(self, field_weights: Dict[str, float], k1: float = 1.2, b: float = 0.75) -> None:
        self.field_weights = field_weights
        self.k1 = k1
        self.b = b
        self.keys: List[str] = []
        self._fields: List[Dict[str, Tuple[Counter, int]]] = []
        self._df: Counter = Counter()
        self._length_sum: Counter = Counter()
        self._tf: Optional[List[Dict[str, float]]] = None  # weighted, normalised; built on first search
        self._documents: Optional[int] = None  # the corpus idf counts, when this index is a slice of a larger one

    def add(self, key: str, fields: Dict[str, str]) -> None:
        parsed: Dict[str, Tuple[Counter, int]] = {}
        terms = set()
        for name, text in fields.items():
            tokens = tokenize(text)
            if tokens:
                parsed[name] = (Counter(tokens), len(tokens))
                self._length_sum[name] += len(tokens)
                terms.update(tokens)
        self.keys.append(key)
        self._fields.append(parsed)
        self._df.update(terms)
        self._tf = None

    def __len__(self) -> int:
        return len(self.keys)

    def state(self) -> Dict[str, object]:
        """Everything `search` needs, as JSON-ready data (for an on-disk cache)."""
        state = {"field_weights": self.field_weights, "k1": self.k1, "b": self.b, "keys": self.keys,
                 "df": dict(self._df), "tf": self._weighted()}
        if self._documents is not None:
            state["documents"] = self._documents
        return state

    @classmethod
    def from_state(cls, data: Dict[str, object]) -> "BM25Index":
        index = cls(dict(data["field_weights"]), k1=float(data["k1"]), b=float(data["b"]))  # type: ignore[arg-type]
        index.keys = list(data["keys"])  # type: ignore[arg-type]
        index._df = Counter(data["df"])  # type: ignore[arg-type]
        index._tf = list(data["tf"])  # type: ignore[arg-type]
        index._fields = [{} for _ in index.keys]
        index._documents = int(data["documents"]) if "documents" in data else None  # type: ignore[arg-type]
        return index

    def subset(self, positions: Sequence[int], keys: Sequence[str]) -> "BM25Index":
        """The documents at `positions`, renamed `keys`, scored as in this index: a word keeps the
        rarity it has among all the documents, so a search of the slice ranks its documents as a
        search of the whole would."""
        table = self._weighted()
        tf = [table[p] for p in positions]
        return BM25Index.from_state({
            "field_weights": dict(self.field_weights), "k1": self.k1, "b": self.b, "keys": list(keys), "tf": tf,
            "df": {t: self._df[t] for row in tf for t in row},  # the words a search of the slice can meet
            "documents": self._documents or len(self.keys)})

    def idf(self, token: str) -> float:
        n, df = self._documents or len(self.keys), self._df.get(token, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def idfs(self) -> Dict[str, float]:
        """Every indexed word's idf."""
        return {t: self.idf(t) for t in self._df}

    def term_weights(self) -> List[Tuple[str, Dict[str, float]]]:
        """Each document's words weighted as a search weighs a match of them (idf times saturated
        term frequency): the document as a vector."""
        table = self._weighted()
        return [(key, {t: self.idf(t) * f * (self.k1 + 1.0) / (f + self.k1) for t, f in row.items()})
                for key, row in zip(self.keys, table)]

    def coverage(self, query: str, matched: Iterable[str]) -> float:
        """The share of the query's weight (idf) carried by `matched` terms. Terms no document uses
        count at full rarity, except numbers and addresses (pasted logs are full of them) and
        Chinese bigrams (most unknown ones straddle two words: 么意, 码是)."""
        weights = {t: self.idf(t) for t in set(tokenize(query))
                   if t in self._df or not any(c.isdigit() or "\u3400" <= c <= "\ufaff" for c in t)}
        total = sum(weights.values())
        return sum(weights.get(t, 0.0) for t in set(matched)) / total if total else 0.0

    def _weighted(self) -> List[Dict[str, float]]:
        if self._tf is None:
            count = len(self.keys) or 1
            average = {name: (total / count) or 1.0 for name, total in self._length_sum.items()}
            table: List[Dict[str, float]] = []
            for parsed in self._fields:
                weighted: Dict[str, float] = {}
                for name, (counts, length) in parsed.items():
                    factor = self.field_weights.get(name, 1.0) / (1.0 - self.b + self.b * length / average[name])
                    for token, tf in counts.items():
                        weighted[token] = weighted.get(token, 0.0) + factor * tf
                table.append(weighted)
            self._tf = table
        return self._tf

    def search(self, query: str, limit: Optional[int] = None,
               allow: Optional[Iterable[int]] = None) -> List[Tuple[str, float, List[str]]]:
        terms = list(dict.fromkeys(tokenize(query)))  # unique, in order
        if not terms or not self.keys:
            return []
        table = self._weighted()
        idf = {t: self.idf(t) for t in terms if self._df.get(t)}
        candidates = range(len(self.keys)) if allow is None else allow
        results: List[Tuple[str, float, List[str]]] = []
        for index in candidates:
            tf = table[index]
            score = 0.0
            matched: List[str] = []
            for term, weight in idf.items():
                freq = tf.get(term)
                if freq:
                    score += weight * freq * (self.k1 + 1.0) / (freq + self.k1)
                    matched.append(term)
            if score > 0.0:
                results.append((self.keys[index], score, matched))
        results.sort(key=lambda item: (-item[1], item[0]))
        return results[:limit] if limit else results


def query_terms(text: str) -> Sequence[str]:
    """The distinct tokens of a question (for explaining a match)."""
    return list(dict.fromkeys(tokenize(text)))
