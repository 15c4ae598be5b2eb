"""Remove what identifies a person or a machine before a case is saved or shared.

A case quotes the user's error verbatim, and errors carry home paths, user names, IP addresses,
host names and sometimes tokens (an `HF_TOKEN=hf_...` echoed by a launcher). Each rule replaces
its match with a visible marker (`~`, `<user>`, `<host>`, `<ip>`, `<token>`, `<email>`) and is
counted, so the user is told what was removed. Redaction is idempotent: the markers match nothing.
"""
from __future__ import annotations

import getpass
import ipaddress
import os
import re
import socket
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

# Names too common in error text to replace as words (a user called "root" still gets /root → ~).
COMMON_WORDS = frozenset({
    "root", "user", "users", "admin", "ubuntu", "test", "home", "data", "work", "default", "guest",
    "node", "npu", "ascend", "torch", "python", "model", "host", "local", "server", "worker", "git",
    "huawei", "hw", "dev", "ma-user", "hwhiaiuser", "hwmindx", "runner", "jenkins", "ci",
})
# Hosts and addresses that identify no one.
PUBLIC_HOSTS = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

KINDS = ("home_path", "user_name", "hostname", "ip", "token", "email")
KIND_NAMES = {
    "home_path": {"en": "home path", "zh": "家目录路径"},
    "user_name": {"en": "user name", "zh": "用户名"},
    "hostname": {"en": "host name", "zh": "主机名"},
    "ip": {"en": "IP address", "zh": "IP 地址"},
    "token": {"en": "token / key", "zh": "令牌 / 密钥"},
    "email": {"en": "e-mail address", "zh": "邮箱地址"},
}

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_AUTH_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization)(\s*[:=]\s*)(?:(bearer|basic|token|digest)\s+)?([^\s\"',;]+)")
_AUTH_SCHEMES = ("bearer", "basic", "token", "digest")
# `HF_TOKEN=...`, `api_key: ...`, `--password xyz`: the key says the value is secret.
_SECRET_ASSIGN = re.compile(
    r"(?i)((?<![\w])[\w.-]*?(?:token|api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key(?:[_-]?id)?|passw(?:or)?d|pwd|credentials?)"
    r"[\"']?)(\s*[=:]\s*|\s+)([\"']?)(?!<token>)([^\s\"',;]+)\3")
# Secrets recognisable by their shape alone.
_TOKEN_SHAPES = re.compile(
    r"\bhf_[A-Za-z0-9]{20,}\b"  # Hugging Face
    r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"  # OpenAI / Anthropic style
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # JWT
)
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@<>]+):([^/\s@<>]+)@")
_EMAIL = re.compile(r"(?<![\w.+-])([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b")
_HOME = re.compile(r"(?<![\w.~-])(?:/home|/Users)/([^/\s'\"<>:]+)|(?<![\w.~-])/root(?=[/\s'\":]|$)|\b[A-Za-z]:\\Users\\([^\\\s'\"<>]+)")
# `[alice@node01 ~]$`, `alice@node01:~$`: a shell prompt quoted with the error.
_PROMPT = re.compile(r"(?<![\w.@-])([A-Za-z_][\w.-]{0,31})@([A-Za-z][\w-]*(?:\.[\w-]+)*)(?=[\s:\]])")
_HOST_ASSIGN = re.compile(
    r"(?i)\b(hostname|host_name|host|master_addr(?:ess)?|node_?name|server_name)(\s*[=:]\s*)([\"']?)([A-Za-z][\w-]*(?:\.[\w-]+)*)\3")
_INTERNAL_FQDN = re.compile(r"(?<![\w.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:internal|intra|intranet|corp|lan|localdomain|svc\.cluster\.local)\b")
_IPV4 = re.compile(r"(?<![\w.])((?:\d{1,3}\.){3}\d{1,3})(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])([0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:])")
_VERSION_CONTEXT = re.compile(r"(?i)(?:\bversion|\bver|\bv|\bcann|driver|firmware|toolkit|release|==|>=|<=)[\s:=]*$")


class Redactor:
    """Applies every rule to text or to a nested structure and counts what it replaced."""

    def __init__(self, names: Iterable[str] = (), hosts: Iterable[str] = ()) -> None:
        self.names: Set[str] = {n for n in names if _worth_replacing(n)}
        self.hosts: Set[str] = {h for h in hosts if len(h) >= 3 and h.lower() not in PUBLIC_HOSTS}
        self.counts: Dict[str, int] = {}

    # -- public -----------------------------------------------------------------------------
    def text(self, value: str) -> str:
        if not value:
            return value
        for rule in (self._private_keys, self._auth_headers, self._token_shapes, self._url_credentials,
                     self._secret_assignments, self._emails, self._homes, self._prompts, self._host_assignments,
                     self._internal_fqdns, self._ipv4, self._ipv6, self._known_hosts, self._known_names):
            value = rule(value)
        return value

    def apply(self, obj: Any) -> Any:
        """Redact every string inside dicts / lists (keys are kept)."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self.apply(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.apply(v) for v in obj]
        return obj

    def summary(self) -> Dict[str, int]:
        return {k: self.counts[k] for k in KINDS if self.counts.get(k)}

    # -- rules ------------------------------------------------------------------------------
    def _count(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def _sub(self, pattern: "re.Pattern[str]", kind: str, text: str, repl: Callable[["re.Match[str]"], Optional[str]]) -> str:
        def wrapped(m: "re.Match[str]") -> str:
            out = repl(m)
            if out is None or out == m.group(0):
                return m.group(0)
            self._count(kind)
            return out

        return pattern.sub(wrapped, text)

    def _private_keys(self, text: str) -> str:
        return self._sub(_PRIVATE_KEY, "token", text, lambda m: "<private-key>")

    def _auth_headers(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            value = m.group(4)
            if value == "<token>" or (not m.group(3) and value.lower() in _AUTH_SCHEMES):
                return None  # already redacted
            return f"{m.group(1)}{m.group(2)}{(m.group(3) + ' ') if m.group(3) else ''}<token>"

        return self._sub(_AUTH_HEADER, "token", text, repl)

    def _token_shapes(self, text: str) -> str:
        return self._sub(_TOKEN_SHAPES, "token", text, lambda m: "<token>")

    def _url_credentials(self, text: str) -> str:
        return self._sub(_URL_CREDENTIALS, "token", text, lambda m: f"{m.group(1)}<user>:<token>@")

    def _secret_assignments(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            key, sep, quote, value = m.group(1), m.group(2), m.group(3), m.group(4)
            is_password = re.search(r"(?i)passw|pwd", key) is not None
            if sep.strip() == "" and not is_password:
                return None  # `token abc` is prose; only `--password abc` is taken without = or :
            if not is_password and (len(value) < 8 or value.isdigit() or not re.search(r"[A-Za-z]", value)):
                return None  # `max_token=4096`, `token: None` are not secrets
            if value.lower() in ("none", "null", "true", "false", "***", "<token>"):
                return None
            return f"{key}{sep}{quote}<token>{quote}"

        return self._sub(_SECRET_ASSIGN, "token", text, repl)

    def _emails(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            if m.group(1).lower() == "git":
                return None  # git@github.com:org/repo is an address of code, not of a person
            return "<email>"

        return self._sub(_EMAIL, "email", text, repl)

    def _homes(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            user = m.group(1) or m.group(2)
            if user:
                if user.startswith("<"):
                    return None
                if _worth_replacing(user):
                    self.names.add(user)
            return "~"

        return self._sub(_HOME, "home_path", text, repl)

    def _prompts(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            user, host = m.group(1), m.group(2)
            if user.lower() == "git":
                return None  # git@github.com:org/repo
            if _worth_replacing(user):
                self.names.add(user)
            self._count("user_name")
            if host.lower() not in PUBLIC_HOSTS:
                self.hosts.add(host)
            return "<user>@<host>"

        return self._sub(_PROMPT, "hostname", text, repl)

    def _host_assignments(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            value = m.group(4)
            if value.lower() in PUBLIC_HOSTS or _looks_like_ip(value):
                return None
            self.hosts.add(value)
            return f"{m.group(1)}{m.group(2)}{m.group(3)}<host>{m.group(3)}"

        return self._sub(_HOST_ASSIGN, "hostname", text, repl)

    def _internal_fqdns(self, text: str) -> str:
        return self._sub(_INTERNAL_FQDN, "hostname", text, lambda m: "<host>")

    def _ipv4(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            value = m.group(1)
            if _VERSION_CONTEXT.search(text[max(0, m.start() - 16):m.start()]):
                return None  # `CANN 7.0.0.1` is a version
            try:
                address = ipaddress.IPv4Address(value)
            except ValueError:
                return None
            if address.is_loopback or address.is_unspecified or value == "255.255.255.255":
                return None
            return "<ip>"

        return self._sub(_IPV4, "ip", text, repl)

    def _ipv6(self, text: str) -> str:
        def repl(m: "re.Match[str]") -> Optional[str]:
            value = m.group(1)
            groups = [g for g in value.split(":") if g]
            # `c10::add` parses as IPv6: ask for three groups, or a full first group (fe80::1, 2001:db8::1)
            if len(groups) < 3 and not (groups and len(groups[0]) == 4 and "::" in value):
                return None
            try:
                address = ipaddress.IPv6Address(value)
            except ValueError:
                return None
            if address.is_loopback or address.is_unspecified:
                return None
            if all(g.isdigit() for g in groups) and "::" not in value and len(groups) < 8:
                return None  # 06:46:08:123 is a time
            return "<ip>"

        return self._sub(_IPV6, "ip", text, repl)

    def _known_hosts(self, text: str) -> str:
        for host in sorted(self.hosts, key=len, reverse=True):
            pattern = re.compile(r"(?<![\w.-])" + re.escape(host) + r"(?![\w-])")
            text = self._sub(pattern, "hostname", text, lambda m: "<host>")
        return text

    def _known_names(self, text: str) -> str:
        for name in sorted(self.names, key=len, reverse=True):
            pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
            text = self._sub(pattern, "user_name", text, lambda m: "<user>")
        return text


def _worth_replacing(name: str) -> bool:
    return len(name) >= 3 and name.lower() not in COMMON_WORDS and not name.startswith("<")


def _looks_like_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return False


def local_identities(environ: Optional[Dict[str, str]] = None) -> Tuple[List[str], List[str]]:
    """This machine's user names and host names, which may appear anywhere in a pasted error."""
    env = os.environ if environ is None else environ
    names: List[str] = []
    for key in ("USER", "LOGNAME", "SUDO_USER"):
        if env.get(key):
            names.append(env[key])
    try:
        names.append(getpass.getuser())
    except Exception:  # noqa: BLE001 - no passwd entry in a container: nothing to add
        pass
    hosts: List[str] = []
    try:
        hostname = socket.gethostname()
        hosts.extend([hostname, hostname.split(".")[0]])
    except OSError:
        pass
    return names, [h for h in hosts if h]


def default_redactor() -> Redactor:
    names, hosts = local_identities()
    return Redactor(names=names, hosts=hosts)


def describe(counts: Dict[str, int], lang: str) -> str:
    """`2 home paths, 1 token / key` (en) or `家目录路径 2 处，令牌 / 密钥 1 处` (zh)."""
    parts = []
    for kind in KINDS:
        n = counts.get(kind, 0)
        if not n:
            continue
        name = KIND_NAMES[kind]["zh" if lang == "zh" else "en"]
        parts.append(f"{name} {n} 处" if lang == "zh" else f"{n} {_plural(name) if n > 1 else name}")
    return ("，" if lang == "zh" else ", ").join(parts)


def _plural(name: str) -> str:
    if name.endswith("key"):
        return name  # "token / key": the count already says it
    return name + ("es" if name.endswith("ss") else "s")  # IP addresses, e-mail addresses
