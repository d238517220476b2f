"""Credentials out of every text that leaves the job: SQL, names, messages.

One rule for the driver's log lines and errors, the lineage document, OpenLineage events, the UI and
the CLI: ``scrub`` masks, ``secrets_in`` lists what it masks (for Airflow's log masker),
``scrub_location`` masks a dataset's location (each directory kept where it was), ``scrub_command`` a
command's arguments (the value after a secret-named flag), and ``strip_jdbc_credentials`` drops
credentials from a JDBC URL. Standard library only: the Spark driver uses it too.

The rule knows key *spellings*, not key words. A key (an OPTIONS key, a Spark conf, a URL parameter,
a JSON field, a command-line flag) is secret when its name, lower-cased with every separator removed,
contains one of ``SECRET_WORDS`` (``sfPassword``, ``aws_secret_access_key``, ``x-api-key``,
``fs.azure.account.key.<acct>...``, ``javax.jdo.option.ConnectionPassword``), or has one of
``SECRET_PARTS`` as a whole part (``sasToken``, ``fs.azure.sas.<container>...``; not ``sasl``).
Where such a key stands next to a value is the table ``FORMS``: each row a pattern with a ``key`` and
a ``value`` group; the whole value is masked, every quoting and escape of a string literal included.
SQL comments are scrubbed too: everything in a comment after a secret name is masked. In a storage path
``?``, ``&`` and ``=`` are a file name's characters: a secret ``key=value`` there ends at its directory's end.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

REDACTED = "***"

# -- which names are secret -------------------------------------------------------------------------

# Contained anywhere in a name lower-cased without separators ("Connection_Password" -> connectionpassword).
SECRET_WORDS = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "credential", "accesskey", "accountkey",
    "privatekey", "apikey", "authpass", "storepass", "keypass", "encryptionkey", "signingkey",
    "accesssignature", "connectionstring", "masterkey", "sharedkey", "hmackey",
)
# A whole part of a name (split at separators and camelCase): ``sasToken``, ``fs.azure.sas.c.a``, not ``sasl``.
SECRET_PARTS = frozenset({"sas"})
# The last part of a name (``spark.redis.auth``, ``X-Amz-Signature``, ``http.header.Authorization``; not
# ``fs.gs.auth.type``, ``signature_version``).
SECRET_LAST_PARTS = frozenset({"auth", "signature", "authorization"})
# URL and connection-string parameters that are credentials by their name alone (``?key=...&sig=...``).
URL_SECRET_NAMES = frozenset({"key", "auth", "sig", "signature"})
# User names: masked where they stand beside a credential (``?user=``, ``OPTIONS (user '...')``), but
# never given to a log masker (a user named ``etl`` would hide every "etl" of the task log).
USER_NAMES = frozenset({"user", "username", "uid"})
# Secret as an OPTIONS or property key alone (``OPTIONS (key '...')``, ``'key' = '...'``), never as a column
# compared (``WHERE key = 'x'``) or a JSON field (``{"key": "order-1"}``).
OPTION_SECRET_NAMES = frozenset({"key"})
# Values no credential has: never given to a log masker (``hadoop.security.authorization=true``).
_NO_CREDENTIAL = frozenset({"true", "false", "null", "none"})
# Names of what finds a credential, not of the credential (``fs.s3a.aws.credentials.provider``).
_NOT_SECRET_ENDINGS = ("provider", "providers", "providerpath")


def _parts(name: str) -> list[str]:
    return [p.lower() for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]


def is_secret_name(name: str) -> bool:
    """A key whose value is a credential, in any case and with any separator or none."""
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    if not flat or flat.endswith(_NOT_SECRET_ENDINGS):
        return False
    parts = _parts(name)
    return (any(word in flat for word in SECRET_WORDS) or not SECRET_PARTS.isdisjoint(parts)
            or bool(parts) and parts[-1] in SECRET_LAST_PARTS)


def is_secret_conf(key: str) -> bool:
    """A Spark conf key whose value is a credential (``spark.hadoop.fs.s3a.access.key``, ``...secret.key``,
    ``...session.token``, ``fs.azure.account.key.<acct>...``, a JDBC password)."""
    return is_secret_name(key)


def _is_url_secret(name: str) -> bool:
    return name.lower() in URL_SECRET_NAMES | USER_NAMES or is_secret_name(name)


# -- the pieces of the patterns ---------------------------------------------------------------------

# A string literal: '...' or "..." (r'...' too) with backslash escapes and doubled quotes; one left
# open (a statement's first line, a literal cut by a line break) runs to the end of the text.
_LIT = r"""[rR]?(?:'(?:[^'\\]|\\[\s\S]|'')*'?|"(?:[^"\\]|\\[\s\S]|"")*"?)"""
# A value: a literal, or literals side by side (Spark joins 'ab' 'cd' into one string).
_VALUE = rf"{_LIT}(?:\s*{_LIT})*"
# A key: bare (dots and dashes inside), backquoted, or quoted on one line.
_KEY = r"""(?:`[^`\n]+`|'(?:[^'\\\n]|\\.)+'|"(?:[^"\\\n]|\\.)+"|(?:(?<=-D)|(?<![\w.\-$@]))[A-Za-z_](?:[\w.\-]*\w)?)"""


def _name(key: str) -> str:
    return key[1:-1] if key[:1] in "`'\"" and len(key) > 1 else key


def _unquoted(value: str) -> list[str]:
    """The text a value holds, as written and as Spark reads it (escapes undone)."""
    out: list[str] = []
    for lit in re.findall(_LIT, value) or [value]:
        body = lit[1:] if lit[:1] in "rR" else lit
        if body[:1] in "'\"":
            q = body[0]
            body = body[1:-1] if len(body) > 1 and body.endswith(q) else body[1:]
            out += [body, body.replace(q * 2, q).replace("\\" + q, q)]
        else:
            out.append(lit)
    return out


def _masked(value: str) -> str:
    """A value masked whole: one literal ``'***'`` (its quote kept) for any run of literals."""
    body = value.lstrip("rR") if value[:2].lower() in ("r'", 'r"') else value
    lines = "\n" * value.count("\n")  # a script's line numbers stay what they were
    if body[:1] in "'\"":
        return f"{body[0]}{REDACTED}{body[0]}{lines}"
    return REDACTED + lines


class Form(NamedTuple):
    """One way a key and its value are written: ``pattern`` has groups ``key`` and ``value``; the value
    is masked when ``secret`` says the key's name is a secret one (given the whole match)."""

    name: str
    pattern: re.Pattern[str]
    secret: Callable[[str, re.Match[str]], bool]
    example: str


def _secret(name: str, m: re.Match[str]) -> bool:
    return is_secret_name(name)


def _secret_or_user(name: str, m: re.Match[str]) -> bool:
    """A user name too in the OPTIONS (``user 'bob'``) and JSON (``"user": "bob"``) forms, never in a
    comparison (``WHERE user = 'x'``)."""
    if is_secret_name(name):
        return True
    quoted_key = m.group("key")[:1] in "'\""
    option = quoted_key or "=" not in m.group("sep").replace("=>", "")
    if name.lower() in OPTION_SECRET_NAMES:
        return option and ":" not in m.group("sep")
    return name.lower() in USER_NAMES and option


def _secret_unquoted(name: str, m: re.Match[str]) -> bool:
    """``key=value``, or ``key: value`` with a key in lower case (``password: v``, not a log line's
    ``DelegationTokenManager: Attempting ...``); not an authorization's scheme (``Basic``) whose
    credential the header form masked."""
    if _parts(name)[-1:] == ["authorization"] and re.match(r"[ \t]+\*\*\*", m.string[m.end():]):
        return False
    return is_secret_name(name) and (m.group("sep") == "=" or name == name.lower())


# The forms a SQL text is read in, one pass left to right (so a literal is never read from its middle).
# Comments and string literals not taken by a form are matched too: a comment is masked after its first
# secret name; a literal's content is read again with these forms (JSON in a string, --conf "k=v").
SQL_FORMS = (
    Form("SET", re.compile(
        rf"(?:^|(?<=;))[ \t]*SET[ \t]+(?:-v[ \t]+)?(?P<key>{_KEY})(?P<sep>[ \t]*=\s*)(?P<value>{_VALUE}|[^;]*)",
        re.I | re.M), _secret, "SET spark.hadoop.fs.s3a.secret.key = v"),
    Form("key value", re.compile(rf"(?P<key>{_KEY})(?P<sep>\s*(?:=>|==|=|:)\s*|\s+)(?P<value>{_VALUE})"),
         _secret_or_user, "OPTIONS (password 'v', 'sfPassword' = \"v\"), {\"token\": \"v\"}, f(token => 'v')"),
    Form("command-line flag", re.compile(
        rf"(?<![\w-])--(?P<key>[A-Za-z][\w.\-]*)(?P<sep>=|[ \t]+)(?P<value>(?!--?[A-Za-z])(?:{_VALUE}|[^\s'\"]+))"),
         _secret, "--password v, --api-key=v"),
)
# A comment: /* ... */, or -- to the end of the line (a mid-line --word is a command-line flag).
_COMMENT = r"/\*[\s\S]*?(?:\*/|\Z)|^[ \t]*--[^\n]*|--(?![A-Za-z])[^\n]*"
_COMMENT_KEY = re.compile(rf"(?P<key>{_KEY})(?P<sep>\s*(?:=>|[:=]|\bis\b)?\s*)", re.I)
# The whole content of a literal being ``key=value`` (``--conf "k=a b"``): all of it after ``=`` is the value.
_WHOLE_KV = re.compile(r"\s*(?P<key>[A-Za-z_][\w.\-]*)(?P<sep>\s*[=:]\s*)(?P<value>[\s\S]+)")

# A value masked already (``password=***/dir``): a second pass leaves it, and the path after it, as it is.
_NOT_MASKED = r"(?!\*\*\*(?:[/&;#\s'\"`)]|$))"

# The schemes of an Authorization header (RFC 9110 and the clouds'), which stay visible before the credential.
_AUTH_SCHEME = (r"(?:basic|bearer|digest|negotiate|ntlm|token|oauth|hoba|mutual|vapid|hawk|apikey|sharedkey(?:lite)?"
                r"|sharedaccesssignature|aws4-hmac-sha256|goog4-(?:rsa|hmac)-sha256|scram-sha-\d+)")

# The forms read anywhere in the text, literals and comments included, after the SQL forms.
TEXT_FORMS = (
    # jdbc:oracle:thin:user/password@host
    Form("Oracle user/password", re.compile(r"(?i)(?P<prefix>jdbc:oracle:[a-z0-9]+:)(?P<key>[^@/\s'\"]*)/"
                                            r"(?P<value>[^@\s'\"]*)@"), lambda n, m: True,
         "jdbc:oracle:thin:scott/v@//h:1521/ORCL"),
    # scheme://user:password@host (or user@host): the user info goes.
    Form("URL user info", re.compile(r"(?i)(?P<prefix>\b[a-z][a-z0-9+.\-]{0,30}:(?:[a-z0-9+.\-]{1,30}:){0,3}//)"
                                     r"(?P<key>[^/?#:\s'\"]*)(?::(?P<value>[^/?#\s'\"]*))?@"),
         lambda n, m: True, "s3a://AKIA:v@bucket/x"),
    # ?key=value&... in a URL, ;key=value in a JDBC property list.
    Form("URL parameter", re.compile(rf"(?P<prefix>[?&;])(?P<key>[\w.\-]+)=(?P<value>{_NOT_MASKED}[^&;#\s'\"`]*)"),
         lambda n, m: _is_url_secret(n), "?password=v&sig=v, ;password=v"),
    # Authorization: Basic <credential>, Proxy-Authorization=<token>: the scheme stays, the credential goes.
    Form("authorization header", re.compile(
        r"(?i)\b(?P<key>(?:proxy-)?authorization)"
        rf"(?P<sep>[ \t]*[:=][ \t]*(?!{_AUTH_SCHEME}[ \t]+\*\*\*)(?:{_AUTH_SCHEME}[ \t]+(?=[^\s'\"`]))?)"
        rf"(?P<value>{_NOT_MASKED}[^\s'\"`,;)]+)"), lambda n, m: True, "Authorization: Basic dXNlcjpwYXNz"),
    # key=value unquoted anywhere (--conf k=v, -Dk=v, a log line, k: v).
    Form("key=value", re.compile(r"(?:(?<=-D)|(?<![\w.\-]))(?P<key>[A-Za-z_](?:[\w.\-]*\w)?)(?P<sep>=|:[ \t]*)"
                                 rf"(?P<value>{_NOT_MASKED}[^\s'\"`;&)]+)"), lambda n, m: _secret_unquoted(n, m),
         "--conf spark.x.password=v, token: v"),
    # Authorization: Bearer <token>
    Form("bearer token", re.compile(r"(?i)\b(?P<key>bearer)[ \t]+(?P<value>[A-Za-z0-9\-._~+/]{8,}=*)"),
         lambda n, m: True, "Authorization: Bearer v0123456789"),
)
FORMS = SQL_FORMS + TEXT_FORMS
# A storage path (a bare path, or the URI of a filesystem Spark reads): ``?``, ``&``, ``=`` and ``;`` are
# characters of a file's name there, so a secret value in it ends where its directory does (at ``/``).
_STORAGE_SCHEMES = ("file", "hdfs", "viewfs", "webhdfs", "swebhdfs", "har", "s3", "s3a", "s3n", "gs", "abfs",
                    "abfss", "wasb", "wasbs", "adl", "oss", "cos", "cosn", "obs", "o3fs", "ofs", "alluxio", "dbfs",
                    "maprfs", "jfs", "lakefs")
_STORAGE_START = re.compile(rf"(?:{'|'.join(_STORAGE_SCHEMES)}):|/", re.I)
# A storage path in free text: a word starting with ``/`` or a storage scheme after a space, quote or ``(``.
_STORAGE_TOKEN = re.compile(rf"(?<![^\s'\"`(,])(?:{_STORAGE_START.pattern})[^\s'\"`]*", re.I)
# A backquoted path (``parquet.`/data/out dir/x` ``): spaces and all, one path.
_QUOTED_PATH = re.compile(rf"(?<=`)(?:{_STORAGE_START.pattern})[^`\n]*(?=`)", re.I)
# ``key=value`` in one directory of a path: at its start, or as a parameter after ``?``, ``&`` or ``;``.
_SEGMENT_PARAM = re.compile(rf"(?P<prefix>^|[?&;])(?P<key>[A-Za-z_][\w.\-]*)=(?P<value>{_NOT_MASKED}[^?&]*)")
# Azure's wasb(s)/abfs(s) URLs name the container where other URLs have a user.
_CONTAINER_SCHEME = re.compile(r"(?i)(?:wasbs?|abfss?)://")

# All of them in one pattern (each form's own groups unnamed: it is matched again to read them).
_SQL = re.compile("|".join([f"(?P<comment>{_COMMENT})"]
                           + [f"(?P<f{i}>{re.sub(r'[(][?]P<[a-z]+>', '(?:', f.pattern.pattern)})"
                              for i, f in enumerate(SQL_FORMS)]
                           + [f"(?P<lit>{_LIT})"]), re.I | re.M)


# -- the rule ----------------------------------------------------------------------------------------

class _Redaction:
    def __init__(self) -> None:
        self.found: list[str] = []
        self.depth = 0  # literals read inside literals: JSON in a string is one level, never more than two

    def mask(self, value: str, name: str = "") -> str:
        if name.lower() not in USER_NAMES:
            self.found += [v.strip() for v in _unquoted(value)]
        return _masked(value)

    def sql(self, text: str) -> str:
        return _SQL.sub(self._sql_match, text)

    def _sql_match(self, m: re.Match[str]) -> str:
        if m.group("comment") is not None:
            return self.comment(m.group("comment"))
        if m.group("lit") is not None:
            return self.literal(m.group("lit"))
        for i, form in enumerate(SQL_FORMS):
            if m.group(f"f{i}") is not None:
                sub = form.pattern.match(m.string, m.start())
                if sub is None or sub.end() != m.end():  # pragma: no cover - the same pattern, at the same place
                    return m.group(0)
                return self.form(form, sub)
        return m.group(0)  # pragma: no cover

    def form(self, form: Form, m: re.Match[str]) -> str:
        start, end = m.span("value")
        value = m.group("value")
        text = m.group(0)
        base = m.start(0)
        if form.secret(_name(m.group("key")), m) and value.strip():
            stripped = value.rstrip()
            new = self.mask(stripped, _name(m.group("key"))) + value[len(stripped):]
        else:
            new = "".join(self.literal(lit) if lit[:1] in "'\"rR" and re.fullmatch(_LIT, lit) else lit
                          for lit in re.split(f"({_LIT})", value))
        return text[:start - base] + new + text[end - base:]

    def literal(self, lit: str) -> str:
        """A literal not taken as a value: its content read again (JSON in a string, ``"k=a b"``)."""
        prefix = lit[:1] if lit[:1] in "rR" else ""
        body = lit[len(prefix):]
        if len(body) < 2:
            return lit
        q = body[0]
        closed = len(body) > 1 and body.endswith(q)
        content = body[1:-1] if closed else body[1:]
        if _STORAGE_START.match(content):  # a path with spaces too: masked as its dataset's name is
            content = self.path(content)
        whole = _WHOLE_KV.fullmatch(content)
        if whole and is_secret_name(whole.group("key")):
            self.found += [whole.group("value").strip()]
            content = content[:whole.start("value")] + _masked(whole.group("value"))
        elif self.depth < 2:
            self.depth += 1
            content = self.sql(content)
            self.depth -= 1
        return prefix + q + content + (q if closed else "")

    def comment(self, text: str) -> str:
        """Everything in a comment after its first secret name is masked (a comment is free text)."""
        opening = re.match(r"[ \t]*(?:--|/\*)", text)
        start = opening.end() if opening else 0
        close = "*/" if text.startswith("/*") and text.endswith("*/") and len(text) >= 4 else ""
        body = self.text(text[start:len(text) - len(close)])  # URLs first: a user info is no name
        for m in _COMMENT_KEY.finditer(body):
            if not is_secret_name(_name(m.group("key"))):
                continue
            rest = body[m.end():]
            if not rest.strip():
                break
            self.found.append(rest.strip().rstrip(";").strip())
            self.found.append(rest.split()[0].strip("'\"`;,"))  # the word after the name: its value
            space = " " if close and rest[-1:].isspace() else ""
            return text[:start] + body[:m.end()] + _masked(rest) + space + close
        return text[:start] + body + close

    def path(self, path: str) -> str:
        """A storage path with each directory's secret ``key=value`` masked to that directory's end."""
        for form in TEXT_FORMS[:2]:  # user info, and Oracle's user/password, span directories
            path = form.pattern.sub(lambda m, f=form: self._text_match(f, m), path)
        return "/".join(_SEGMENT_PARAM.sub(self._segment_match, segment) for segment in path.split("/"))

    def _segment_match(self, m: re.Match[str]) -> str:
        name = m.group("key")
        secret = is_secret_name(name) if not m.group("prefix") else _is_url_secret(name)
        if not secret or not m.group("value"):
            return m.group(0)
        return m.group(0)[:m.start("value") - m.start()] + self.mask(m.group("value"), name)

    def text(self, text: str) -> str:
        for paths in (_QUOTED_PATH, _STORAGE_TOKEN):
            text = paths.sub(lambda m: self.path(m.group(0)), text)
        for form in TEXT_FORMS:
            text = form.pattern.sub(lambda m, f=form: self._text_match(f, m), text)
        return text

    def _text_match(self, form: Form, m: re.Match[str]) -> str:
        if not form.secret(m.group("key") or "", m):
            return m.group(0)
        if form.name in ("Oracle user/password", "URL user info"):
            if form.name == "URL user info" and m.group("value") is None and _CONTAINER_SCHEME.match(m.group(0)):
                return m.group(0)  # abfss://container@account: no credential
            if m.group("value"):
                self.found.append(m.group("value"))
            return m.group("prefix")
        return self.form(form, m)


def scrub(text: str | None) -> str | None:
    """``text`` with every credential the rule recognises masked: secret keys' values in SQL (OPTIONS,
    SET, properties, named arguments), JSON, command lines and comments; URL user info, secret URL
    parameters and JDBC properties, Oracle's ``user/password@``; bearer tokens."""
    if not text:
        return text
    redaction = _Redaction()
    return redaction.text(redaction.sql(text))


def secrets_in(text: str | None) -> list[str]:
    """The credential values ``scrub`` hides in ``text``, as written and unescaped (to register them
    with a log masker, which then hides them in lines this module never sees)."""
    if not text:
        return []
    redaction = _Redaction()
    redaction.text(redaction.sql(text))
    return _registrable(redaction.found)


def _registrable(found: list[str]) -> list[str]:
    return [v for v in dict.fromkeys(found) if len(v) >= 3 and REDACTED not in v and v.lower() not in _NO_CREDENTIAL]


def scrub_location(location: str) -> str:
    """A dataset's storage location with its credentials masked, as every text shows it (``scrub``): in a
    storage path each directory keeps its place (``/d/x&password=***/ü``), so the name still says which
    directory it is; user info goes. Other URLs (``https://...?X-Amz-Signature=***``) are ``scrub``'s."""
    if not location:
        return location
    if re.match(r"[A-Za-z][\w+.\-]+:", location) and not _STORAGE_START.match(location):
        return scrub(location) or location
    redaction = _Redaction()
    return redaction.path(location)


# A command-line flag whose value may be the next argument (``--db-password X``, ``-password X``).
_FLAG = re.compile(r"--?(?P<key>[A-Za-z][\w.\-]*)")
# Short flags whose value is a password: beeline's and mysql's ``-p`` (a psql port is hidden too: a cheap miss).
SECRET_SHORT_FLAGS = frozenset({"-p"})
# A bare argument naming a password (``HivePassword X``, as the Spark provider's own masker reads it).
_SECRET_ENDINGS = ("password", "passwd", "pwd", "secret", "token", "credential", "credentials")


def _command(args: list[Any]) -> tuple[str, list[str]]:
    """(the command as one scrubbed text, the values it hides)."""
    redaction = _Redaction()
    out: list[str] = []
    hide = after_flag = False
    for arg in (str(a) for a in args):
        if hide and not re.match(r"--?[A-Za-z]", arg):
            redaction.found.append(arg.strip())
            out.append(REDACTED)
            hide = after_flag = False
            continue
        flag = _FLAG.fullmatch(arg)
        word = re.fullmatch(r"[A-Za-z_][\w.\-]*", arg) and not after_flag
        hide = bool(flag and (is_secret_name(flag.group("key")) or arg in SECRET_SHORT_FLAGS)
                    or word and re.sub(r"[^a-z]", "", arg.lower()).endswith(_SECRET_ENDINGS))
        after_flag = bool(flag)
        out.append(redaction.text(redaction.sql(arg)))  # each alone: " -- " in a command is no SQL comment
    return " ".join(out), redaction.found


def scrub_command(args: list[Any]) -> str:
    """A command line (a list of arguments) as one text for a log, every credential masked: the argument
    after a secret-named flag (``--db-password X``, ``-p X``) or a bare secret name (``HivePassword X``)
    whole, ``--password=X``, secret ``--conf`` values and URL credentials as ``scrub`` masks them. Flag
    names stay."""
    return _command(args)[0]


def secrets_in_command(args: list[Any]) -> list[str]:
    """The credential values ``scrub_command`` hides in ``args`` (for a log masker)."""
    return _registrable(_command(args)[1])


def strip_jdbc_credentials(url: str) -> str:
    """A JDBC URL without user info and without secret parameters (dropped, not masked)."""
    out = re.sub(TEXT_FORMS[0].pattern, lambda m: m.group("prefix") + "@", url)
    out = re.sub(TEXT_FORMS[1].pattern, lambda m: m.group("prefix"), out)
    out = re.sub(TEXT_FORMS[2].pattern,
                 lambda m: m.group("prefix") if _is_url_secret(m.group("key")) else m.group(0), out)
    out = re.sub(r"[?&;]+(?=$|#)", "", out)
    out = re.sub(r"\?&+", "?", out)
    out = re.sub(r"&&+", "&", out)
    out = re.sub(r";;+", ";", out)
    return out
