"""GitHub's documented CODEOWNERS semantics, ported as path cases against verifier.documents.codeowners.

Source: GitHub Docs, "About code owners" (docs.github.com/en/repositories/managing-your-repositorys-
settings-and-features/customizing-your-repository/about-code-owners), the example CODEOWNERS file
and the syntax notes (last match wins; `*` does not cross `/`; escaped spaces; case-sensitive
paths; a line without owners leaves the path unowned; `!` and `[ ]` unsupported). Issue 11 defect 4.
"""

from __future__ import annotations

import pytest

from verifier.documents.codeowners import owners_of, owning_rule, parse_codeowners

# GitHub's example file (owners shortened), in its order: later lines win.
EXAMPLE = r"""
# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
/apps/ @octocat
/apps/github @doctocat
/docs/space\ name.txt @writer
"""


@pytest.mark.parametrize("path,owners", [
    ("README.md", ("@global-owner1", "@global-owner2")),
    ("src/app.js", ("@js-owner",)),
    ("main.go", ("docs@example.com",)),
    ("x/y/z.go", ("docs@example.com",)),
    ("build/logs/x.log", ("@octocat",)),            # `**/logs` is later and also matches
    ("build/logs/deep/x.log", ("@octocat",)),
    ("scripts/run.sh", ("@doctocat", "@octocat")),
    ("scripts/logs/a", ("@octocat",)),               # `**/logs` anywhere
    ("deeply/nested/logs/a", ("@octocat",)),
    ("apps/github/x.rb", ("@doctocat",)),
    ("apps/other/x.rb", ("@octocat",)),
    ("src/apps/x.rb", ("@octocat",)),                # `apps/` is not anchored
    ("docs/getting-started.md", ("@doctocat",)),     # `/docs/` later than `docs/*`
    ("docs/space name.txt", ("@writer",)),
])
def test_github_example_file(path: str, owners: tuple[str, ...]) -> None:
    assert owners_of(parse_codeowners(EXAMPLE), path) == owners


def test_star_does_not_cross_a_slash() -> None:
    rules = parse_codeowners("* @all\ndocs/* @docs\n")
    assert owners_of(rules, "docs/getting-started.md") == ("@docs",)
    assert owners_of(rules, "docs/build-app/troubleshooting.md") == ("@all",)


def test_ownerless_line_wins_and_leaves_the_path_unowned() -> None:
    rules = parse_codeowners("/apps/ @octocat\n/apps/github\n")
    assert owners_of(rules, "apps/x.rb") == ("@octocat",)
    rule = owning_rule(rules, "apps/github/x.rb")
    assert rule is not None and rule.line == 2 and rule.owners == ()


def test_escaped_space_is_part_of_the_pattern() -> None:
    rules = parse_codeowners("* @all\n/docs/space\\ name.txt @writer\n")
    assert owners_of(rules, "docs/space name.txt") == ("@writer",)
    assert owners_of(rules, "docs/space") == ("@all",)
    assert rules[1].pattern == "/docs/space name.txt" and rules[1].owners == ("@writer",)


def test_matching_is_case_sensitive() -> None:
    rules = parse_codeowners("* @all\n/Docs/ @docs\nREADME.md @readme\n")
    assert owners_of(rules, "Docs/a.md") == ("@docs",)
    assert owners_of(rules, "docs/a.md") == ("@all",)
    assert owners_of(rules, "readme.md") == ("@all",)


@pytest.mark.parametrize("pattern,path,matches", [
    ("**/logs", "logs/a", True),
    ("**/logs", "a/b/logs", True),
    ("docs/**", "docs/a/b/c.md", True),
    ("docs/**/*.md", "docs/a.md", True),
    ("docs/**/*.md", "docs/a/b.md", True),
    ("docs/**/*.md", "docs/a/b.txt", False),
    ("/build/logs/", "build/logs/a", True),
    ("/build/logs/", "build/logs", False),           # a trailing `/` names a directory's contents
    ("/build/logs/", "x/build/logs/a", False),       # a leading `/` anchors
    ("build/logs", "x/build/logs/a", False),         # a middle `/` anchors too
    ("logs", "x/logs/a", True),                      # no `/`: any depth, directory owns below
    ("*.md", "a/b/c.md", True),
    ("/*.md", "a/c.md", False),
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file/.txt", False),
    ("file?.txt", "file12.txt", False),
    ("[ab].txt", "a.txt", False),                    # no character ranges: brackets are literal
    ("[ab].txt", "[ab].txt", True),
])
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    rules = parse_codeowners(f"{pattern} @o\n")
    assert (owning_rule(rules, path) is not None) is matches


def test_negation_and_comments_are_not_rules() -> None:
    rules = parse_codeowners("# comment\n!docs/ @x\n\n*.js @js # trailing\n")
    assert [(r.pattern, r.owners) for r in rules] == [("*.js", ("@js",))]
