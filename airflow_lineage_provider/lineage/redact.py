"""Credentials out of every text that leaves the job: SQL, names, messages.

One rule for the driver's log lines and errors, the lineage document, OpenLineage
events and the UI. Standard library only: the Spark driver uses it too.
"""

from __future__ import annotations

import re

_SECRET_KEYS = ("password", "passwd", "pwd", "user", "username", "secret", "token", "accesskey",
                "secretkey", "access_key", "secret_key", "apikey", "api_key", "credential", "credentials",
                "sessiontoken", "session_token", "key", "privatekey", "private_key", "auth")
_SECRET_KEY_RE = "|".join(sorted((k.replace("_", "[_.-]?") for k in _SECRET_KEYS), key=len, reverse=True))
# key=value in a URL query (?a=1&b=2) or JDBC property list (;a=1;b=2), with a secret key.
_SECRET_PARAM = re.compile(rf"(?i)([?&;])((?:[\w.-]*?)(?:{_SECRET_KEY_RE}))=[^&;#\s'\"]*")
# user:password@ or user@ before a host in any URL (scheme://...@host).
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*:(?:[a-z0-9+.\-]+:)*//)[^/@\s'\"]+@")
# Oracle's thin driver: jdbc:oracle:thin:user/password@host
_ORACLE_USER = re.compile(r"(?i)(jdbc:oracle:[a-z0-9]+:)[^@/\s'\"]*/[^@\s'\"]*@")
# key 'value' / key = "value" / "key": "value" options in SQL text or JSON with a secret key;
# a user name only in the OPTIONS form (user 'bob') or as a JSON key, never in `WHERE user = 'x'`.
_SECRET_OPTION = re.compile(
    r"(?i)([\"'`]?\b(?:password|passwd|pwd|secret|token|secret[_.]?key|access[_.]?key|session[_.]?token)[\"'`]?"
    r"\s*[:=]?\s*)('[^']*'|\"[^\"]*\")")
_USER_OPTION = re.compile(r"(?i)((?:\buser(?:name)?\s+|[\"']user(?:name)?[\"']\s*:\s*))('[^']*'|\"[^\"]*\")")
REDACTED = "***"


def scrub(text: str | None) -> str | None:
    """``text`` with every credential we can recognise replaced: URL user info, secret query
    parameters and JDBC properties, Oracle's ``user/password@``, and secret OPTIONS in SQL."""
    if not text:
        return text
    out = _ORACLE_USER.sub(r"\1", text)
    out = _USERINFO.sub(r"\1", out)
    out = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}={REDACTED}", out)
    for pattern in (_SECRET_OPTION, _USER_OPTION):
        out = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)[0]}{REDACTED}{m.group(2)[0]}", out)
    return out


def strip_jdbc_credentials(url: str) -> str:
    """A JDBC URL without user info and without secret parameters (dropped, not masked)."""
    out = _ORACLE_USER.sub(r"\1@", url)
    out = _USERINFO.sub(r"\1", out)
    out = _SECRET_PARAM.sub(lambda m: m.group(1) if m.group(1) == ";" else m.group(1), out)
    out = re.sub(r"[?&;]+(?=$|#)", "", out)
    out = re.sub(r"\?&+", "?", out)
    out = re.sub(r"&&+", "&", out)
    out = re.sub(r";;+", ";", out)
    return out


# Spark conf keys whose value is a credential: access keys, secrets, tokens, passwords.
_SECRET_CONF_KEY = re.compile(r"(?i)(access[_.-]?key|secret|token|password|passwd|credential)")


def is_secret_conf(key: str) -> bool:
    """A Spark conf key whose value is a credential (``spark.hadoop.fs.s3a.access.key``, ``...secret.key``,
    ``...session.token``, a JDBC password)."""
    return bool(_SECRET_CONF_KEY.search(key))


def secrets_in(text: str | None) -> list[str]:
    """The credential values ``scrub`` would hide in ``text`` (to register them with a log masker,
    which then hides them in lines this module never sees)."""
    if not text:
        return []
    found: list[str] = []
    for m in _SECRET_PARAM.finditer(text):
        value = m.group(0).split("=", 1)[1]
        found.append(value)
    for m in _USERINFO.finditer(text):
        info = m.group(0)[len(m.group(1)):-1]
        found.extend(part for part in info.split(":")[1:2])
    for m in _ORACLE_USER.finditer(text):
        info = m.group(0)[len(m.group(1)):-1]
        found.extend(info.split("/")[1:2])
    for pattern in (_SECRET_OPTION,):
        for m in pattern.finditer(text):
            found.append(m.group(2)[1:-1])
    return [v for v in dict.fromkeys(found) if len(v) >= 3 and v != REDACTED]
