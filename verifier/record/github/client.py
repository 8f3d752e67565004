"""A counted, retrying PyGithub client and capped downloads.

Every GitHub API request goes through PyGithub's Requester, whose connection class is replaced for
this client only (never globally) by one that counts each HTTP attempt and retries, with bounded
backoff, 5xx answers, network errors and secondary rate limits (403/429 with `retry-after` or the
"secondary rate limit" message). An exhausted primary rate limit, a rejected token and a missing
pull request become one-line GitHubErrors. Facts that GitHub refuses to show (403/404) are left
absent by the caller, never assumed.

Artifact archives, upstream pages and checkpoint files are downloaded with a plain requests session,
streamed with a byte cap, and never sent the GitHub token outside the API host.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3.exceptions
from github import Auth, Github, GithubException
from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, RequestsResponse

from verifier.core.errors import GitHubError

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "infx-verifier"
# (connect, read) seconds: a host that cannot be reached fails in seconds, a slow answer may take longer.
DEFAULT_TIMEOUT = (5.0, 30.0)
# A connection that was never established (no route, DNS failure, refused, connect timeout) is
# tried this many times in all, not `RetryPolicy.attempts`: offline, the CLI must fail in seconds.
CONNECT_ATTEMPTS = 2


def never_connected(exc: BaseException) -> bool:
    """True when the request failed before a connection existed (no route, DNS, refused, timeout)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, urllib3.exceptions.NewConnectionError | urllib3.exceptions.ConnectTimeoutError):
            return True
        reason = getattr(cur, "reason", None)
        stack += [e for e in (*cur.args, reason, cur.__cause__, cur.__context__) if isinstance(e, BaseException)]
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries: `attempts` tries in all; waits double from `base_delay`, never above `max_delay`."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    secondary_delay: float = 60.0

    @classmethod
    def from_policy(cls, policy: Mapping[str, Any]) -> RetryPolicy:
        """Build from the `retry` section of policies/github.yaml."""
        return cls(
            attempts=int(policy["attempts"]),
            base_delay=float(policy["base_delay"]),
            max_delay=float(policy["max_delay"]),
            secondary_delay=float(policy["secondary_delay"]),
        )

    def backoff(self, attempt: int, base: float | None = None) -> float:
        """The wait before retry number `attempt` (1-based)."""
        first = self.base_delay if base is None else base
        return min(first * (2 ** (attempt - 1)), self.max_delay)


@dataclass
class CollectStats:
    """What collecting cost: API requests (every HTTP attempt, retries included), downloads, time."""

    requests: int = 0
    retries: int = 0
    graphql: int = 0
    downloads: int = 0
    download_bytes: int = 0
    pages: int = 0
    checkpoints: int = 0
    seconds: float = 0.0
    endpoints: Counter[str] = field(default_factory=Counter)
    absent: list[str] = field(default_factory=list)
    # the launches the recording pass resolved that hold for the collected bundle
    # (verifier.record.fetched `Completion.launches`): its verdict under the same policies starts from them
    resolved: dict[str, Any] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """One line for `-v`."""
        return (
            f"GitHub API requests: {self.requests} ({self.retries} retries, {self.graphql} GraphQL); "
            f"artifact downloads: {self.downloads} ({self.download_bytes} bytes); pages: {self.pages}; "
            f"checkpoint files: {self.checkpoints}; facts left absent: {len(self.absent)}; "
            f"{self.seconds:.2f}s"
        )

    def __str__(self) -> str:
        return self.summary()


def _endpoint(verb: str, url: str) -> str:
    """A coarse endpoint name for the stats (ids and shas folded)."""
    path = urllib.parse.urlsplit(url).path
    parts = []
    for part in path.split("/"):
        if part.isdigit() or (len(part) == 40 and all(c in "0123456789abcdef" for c in part)):
            parts.append("{id}")
        else:
            parts.append(part)
    return f"{verb} {'/'.join(parts)}"


class Transport:
    """Counting and retrying shared by the connection classes of one client."""

    def __init__(self, stats: CollectStats, retry: RetryPolicy, sleep: Callable[[float], None] = time.sleep) -> None:
        self.stats = stats
        self.retry = retry
        self.sleep = sleep

    def retry_delay(self, status: int, headers: Mapping[str, str], text: str, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when the answer is final."""
        if status in (500, 502, 503, 504):
            return self.retry.backoff(attempt)
        if status not in (403, 429):
            return None
        lower = {k.lower(): v for k, v in headers.items()}
        retry_after = lower.get("retry-after")
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.retry.max_delay)
            except ValueError:
                return self.retry.backoff(attempt, self.retry.secondary_delay)
        message = text.lower()
        if "secondary rate limit" in message or "abuse" in message:
            return self.retry.backoff(attempt, self.retry.secondary_delay)
        if lower.get("x-ratelimit-remaining") == "0":
            reset = lower.get("x-ratelimit-reset", "")
            when = ""
            if reset.isdigit():
                when = " (resets at " + time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(int(reset))) + ")"
            raise GitHubError(f"GitHub API rate limit exhausted{when}")
        if status == 429:
            return self.retry.backoff(attempt, self.retry.secondary_delay)
        return None

    def perform(self, verb: str, url: str, call: Callable[[], RequestsResponse]) -> RequestsResponse:
        """Run one API request with bounded retries; every attempt is counted.

        A POST that creates something (a comment) is not repeated after a 5xx or a network error,
        which GitHub may have processed; rate-limit refusals are always safe to repeat.
        """
        repeatable = verb != "POST" or url.endswith("/graphql") or "/statuses/" in url
        for attempt in range(1, self.retry.attempts + 1):
            self.stats.requests += 1
            self.stats.endpoints[_endpoint(verb, url)] += 1
            if url.endswith("/graphql"):
                self.stats.graphql += 1
            try:
                response = call()
            except requests.RequestException as exc:
                offline = never_connected(exc)
                if attempt >= (CONNECT_ATTEMPTS if offline else self.retry.attempts) or not repeatable:
                    host = urllib.parse.urlsplit(url).netloc or "GitHub"
                    raise GitHubError(f"cannot reach the GitHub API ({host}): {type(exc).__name__}") from None
                self.stats.retries += 1
                self.sleep(self.retry.backoff(attempt))
                continue
            text = ""
            if response.status in (403, 429):
                text = response.read()
            if response.status == 200 and _truncated_json(response) and attempt < self.retry.attempts:
                # a body cut off in transit would be read as a broken answer, never as data
                self.stats.retries += 1
                self.sleep(self.retry.backoff(attempt))
                continue
            delay = self.retry_delay(response.status, response.headers, text, attempt)
            if delay is not None and not repeatable and response.status >= 500:
                delay = None
            if delay is None or attempt == self.retry.attempts:
                return response
            self.stats.retries += 1
            self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover


def _connection_classes(transport: Transport) -> tuple[type, type]:
    """Per-client subclasses of PyGithub's connection classes that route through the transport."""

    class _Http(HTTPRequestsConnectionClass):
        def getresponse(self) -> RequestsResponse:
            full = f"{self.protocol}://{self.host}:{self.port}{self.url}"
            return transport.perform(self.verb, full, lambda: HTTPRequestsConnectionClass.getresponse(self))

    class _Https(HTTPSRequestsConnectionClass):
        def getresponse(self) -> RequestsResponse:
            full = f"{self.protocol}://{self.host}:{self.port}{self.url}"
            return transport.perform(self.verb, full, lambda: HTTPSRequestsConnectionClass.getresponse(self))

    return _Http, _Https


def to_github_error(exc: GithubException, what: str) -> GitHubError:
    """A one-line GitHubError for a failed required request."""
    status = exc.status
    message = ""
    if isinstance(exc.data, dict):
        message = str(exc.data.get("message") or "")
    if status == 401:
        return GitHubError("GitHub rejected the token (401 Bad credentials); set GITHUB_TOKEN or GH_TOKEN")
    if status == 404:
        return GitHubError(f"{what} not found on GitHub (404)")
    if status in (403, 429) and ("rate limit" in message.lower() or status == 429):
        return GitHubError(f"GitHub API rate limit still exceeded after retries while reading {what}")
    detail = f": {message}" if message else ""
    return GitHubError(f"cannot read {what}: GitHub answered {status}{detail}")


def _truncated_json(response: RequestsResponse) -> bool:
    """True when a 200 answer declared as JSON does not parse (cut off in transit)."""
    if "json" not in str(response.headers.get("content-type", "")).lower():
        return False
    body = response.read()
    if not body.strip():
        return False
    try:
        json.loads(body)
    except ValueError:
        return True
    return False


def is_unreadable(exc: GithubException) -> bool:
    """True for answers that mean "this fact cannot be read" (leave it absent), not a broken session."""
    if exc.status == 401:
        return False
    message = str(exc.data.get("message") or "").lower() if isinstance(exc.data, dict) else ""
    if exc.status in (403, 429) and "rate limit" in message:
        return False
    return exc.status in (403, 404, 409, 410, 422, 451) or exc.status >= 500


class Client:
    """One GitHub session: PyGithub for the API plus capped downloads, all counted in `stats`."""

    def __init__(
        self,
        token: str | None,
        api_url: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        stats: CollectStats | None = None,
        seconds_between_requests: float = 0.0,
        seconds_between_writes: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
    ) -> None:
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.token = token
        self.stats = stats or CollectStats()
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.timeout = timeout
        self.transport = Transport(self.stats, self.retry, sleep)
        self.gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            per_page=100,
            retry=None,
            timeout=int(max(timeout) if isinstance(timeout, tuple) else timeout),
            user_agent=USER_AGENT,
            seconds_between_requests=seconds_between_requests or None,
            seconds_between_writes=seconds_between_writes or None,
            lazy=True,
        )
        http_cls, https_cls = _connection_classes(self.transport)
        requester = self.gh.requester
        # Instance attributes only: other PyGithub users in the process are not affected.
        scheme = urllib.parse.urlsplit(self.api_url).scheme
        requester._Requester__connectionClass = https_cls if scheme == "https" else http_cls  # type: ignore[attr-defined]
        # PyGithub takes one int; requests (which it passes the value to) takes (connect, read).
        requester._Requester__timeout = timeout  # type: ignore[attr-defined]
        self.requester = requester
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self.graphql_enabled = bool(token)

    def close(self) -> None:
        """Release connections."""
        self.gh.close()
        self.session.close()

    # -- raw API helpers -------------------------------------------------------------------------

    def url(self, path: str) -> str:
        """Absolute API URL of a path such as /repos/o/r/pulls/1."""
        return f"{self.api_url}{path}"

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET one API document (raises GithubException)."""
        _, data = self.requester.requestJsonAndCheck("GET", self.url(path), parameters=dict(params or {}))
        return data

    def paged(
        self, path: str, params: Mapping[str, Any] | None = None, *, key: str | None = None, max_pages: int = 50
    ) -> Iterator[Any]:
        """Items of a paginated list endpoint, following Link rel="next" headers."""
        url: str | None = self.url(path)
        query: dict[str, Any] = {"per_page": 100, **(params or {})}
        pages = 0
        while url and pages < max_pages:
            headers, data = self.requester.requestJsonAndCheck("GET", url, parameters=query)
            pages += 1
            items = data.get(key, []) if key and isinstance(data, dict) else data
            yield from items if isinstance(items, list) else []
            url = _next_link(headers.get("link", ""))
            query = {}

    def send_json(self, verb: str, path: str, body: Mapping[str, Any]) -> Any:
        """POST/PATCH a JSON document (raises GithubException)."""
        _, data = self.requester.requestJsonAndCheck(verb, self.url(path), input=dict(body))
        return data

    def graphql(self, query: str) -> tuple[dict[str, Any], list[Any]]:
        """Run a GraphQL query; returns (data, errors). Partial answers are kept."""
        _, doc = self.requester.requestJsonAndCheck("POST", self.requester.graphql_url, input={"query": query})
        if not isinstance(doc, dict):
            return {}, ["not a JSON object"]
        return doc.get("data") or {}, list(doc.get("errors") or [])

    # -- downloads ---------------------------------------------------------------------------------

    def _stream(self, url: str, limit: int, headers: Mapping[str, str]) -> tuple[int, bytes, str]:
        """GET with retries on 5xx/network errors; returns (status, body up to limit, content type)."""
        for attempt in range(1, self.retry.attempts + 1):
            try:
                with self.session.get(
                    url, headers=dict(headers), stream=True, timeout=self.timeout, allow_redirects=False
                ) as response:
                    if response.status_code in (500, 502, 503, 504) and attempt < self.retry.attempts:
                        self.stats.retries += 1
                        self.sleep(self.retry.backoff(attempt))
                        continue
                    if response.status_code in (403, 429) and attempt < self.retry.attempts:
                        # rate limits on downloads (artifact zips) are retried like API calls
                        delay = self.transport.retry_delay(response.status_code, response.headers,
                                                      response.text[:4096] if response.status_code == 403 else "",
                                                      attempt)
                        if delay is not None:
                            self.stats.retries += 1
                            self.sleep(delay)
                            continue
                    if response.status_code in (301, 302, 303, 307, 308):
                        return response.status_code, response.headers.get("location", "").encode(), ""
                    if response.status_code != 200:
                        return response.status_code, b"", ""
                    declared = response.headers.get("content-length")
                    if declared and declared.isdigit() and int(declared) > limit:
                        return 413, b"", ""
                    body = bytearray()
                    for chunk in response.iter_content(65536):
                        body += chunk
                        if len(body) > limit:
                            return 413, b"", ""
                    return 200, bytes(body), response.headers.get("content-type", "")
            except requests.RequestException:
                if attempt >= min(2, self.retry.attempts):  # an unreachable host rarely comes back
                    return 0, b"", ""
                self.stats.retries += 1
                self.sleep(self.retry.backoff(attempt))
        return 0, b"", ""  # pragma: no cover

    def download(
        self,
        url: str,
        limit: int,
        *,
        auth_host: str | None = None,
        auth_value: str | None = None,
        allow_host: Callable[[str], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        max_redirects: int = 5,
    ) -> tuple[int, bytes, str]:
        """Download with a byte cap, following redirects by hand.

        The Authorization header (`auth_value`, default the GitHub token) goes only to `auth_host`
        (host:port); a redirect to any other host is followed without it, and only when `allow_host`
        accepts that host (default: any host).
        """
        if auth_value is None and self.token:
            auth_value = f"token {self.token}"
        extra = dict(headers or {})
        for _ in range(max_redirects + 1):
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https"):
                return 0, b"", ""
            send = dict(extra)
            if auth_host is not None and parts.netloc == auth_host and auth_value:
                send["Authorization"] = auth_value
            status, body, ctype = self._stream(url, limit, send)
            if status in (301, 302, 303, 307, 308):
                location = urllib.parse.urljoin(url, body.decode("utf-8", "replace"))
                host = urllib.parse.urlsplit(location).hostname or ""
                if allow_host is not None and not allow_host(host):
                    return 0, b"", ""
                url = location
                continue
            return status, body, ctype
        return 0, b"", ""

    @property
    def api_netloc(self) -> str:
        """host[:port] of the API."""
        return urllib.parse.urlsplit(self.api_url).netloc


def _next_link(header: str) -> str | None:
    """The rel="next" URL of a Link header."""
    for part in header.split(","):
        section = part.split(";")
        if len(section) < 2:
            continue
        if any(s.strip() == 'rel="next"' for s in section[1:]):
            return section[0].strip().strip("<>")
    return None
