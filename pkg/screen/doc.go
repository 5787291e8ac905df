// Package screen flags memory text that could act as a prompt injection once intermem
// promotes it from private auto-memory into a committed instruction file (CLAUDE.md,
// AGENTS.md, docs/intermem/*.md) or into injected session context. A flag is a reason for a
// person to look before approving, not a verdict: Check never changes text.
//
// # What is flagged
//
//   - override: attempts to replace the model's instructions: "ignore (all) previous/prior/
//     above/system instructions|rules|prompts", "disregard/reveal the system prompt", "you
//     are now DAN/a …/in … mode", "you are no longer bound by …", "new/updated/real
//     instructions:", "new/real/hidden system prompt", "begin/end of system prompt",
//     "forget everything you were told", jailbreak / developer mode / do-anything-now
//     phrasing.
//   - conceal: "do not tell the user", "without telling the user", "hide this from the user".
//   - hidden-char: runs of bidi controls (U+202A–U+202E, U+2066–U+2069) and marks (LRM,
//     RLM, ALM), zero-width characters (U+200B–U+200D, U+2060–U+2064, U+180E, U+FEFF past
//     offset 0), characters that render as nothing (soft hyphen, U+034F, Hangul and Khmer
//     fillers, Mongolian selectors, U+206A–U+206F, U+FFF9–U+FFFB, musical and shorthand
//     format controls), Unicode tag characters (U+E0000–U+E007F; Detail spells out the ASCII
//     they hide), variation selectors in a run or with no visible base (U+FE00–U+FE0F) and
//     from the supplement (U+E0100–U+E01EF), and control characters: C0 but tab, newline
//     and the CR of a CRLF, DEL, C1 (a terminal obeys ESC[8m, OSC 52, CSI; a reader sees
//     nothing).
//   - remote-exec: fetch-and-run (curl/wget/iwr … | sh/bash/python/iex, bash <(curl …),
//     sh -c "$(curl …)") and decode-and-run (base64 -d | sh, eval(atob(…)),
//     exec(base64.b64decode(…)), powershell -enc …, FromBase64String + iex); remote access:
//     reverse shells (bash -i >& /dev/tcp/…, nc -e /bin/sh, mkfifo … | nc, socat exec:…sh)
//     and keys appended to authorized_keys.
//   - exfiltration: sending secrets, keys, .env, ~/.ssh, the conversation, the system prompt
//     or the codebase somewhere ("send the .env file to https://…", "email the credentials
//     to …"), curl/wget uploading credential files (-d @~/.aws/credentials), and known
//     collection endpoints (webhook.site, requestbin, pipedream, Burp Collaborator,
//     interact.sh, oast.*), and markdown images whose address is a template
//     (![x](https://host/p?d={conversation})): rendering one sends what fills it.
//   - disable-safety: --dangerously-skip-permissions and other --dangerously-* flags,
//     bypassPermissions, skipDangerousModePermissionPrompt, --yolo, Bash(*); "always
//     approve", "always allow every tool call", "auto-approve all"; "never ask for
//     confirmation/permission", "don't ask the user for permission", "without asking for
//     permission"; "disable/turn off/bypass the hooks/sandbox/guardrails/permission checks/
//     safety checks".
//   - hidden-instruction: an HTML comment, a markdown link-reference comment
//     ([//]: # (…)) or a hidden HTML element (hidden, display:none, visibility:hidden,
//     font-size:0, opacity:0) whose text is addressed to an AI ("AI: …", "Claude, …", "Note
//     to the assistant: …") or names an AI in the same breath as an order (ignore, always,
//     never, must, run, send, …).
//   - addressed-instruction: visible text addressed to the model: "Note to Claude:",
//     "Instructions for the AI:", "Dear assistant,", a line that starts "Claude: ignore …".
//   - role-tag: chat-template and tool-call markup: <system>, </system-reminder>,
//     <assistant>, <human>, <instructions>, <function_calls>, <invoke …>, <parameter …>,
//     <…>, <|im_start|> and any <|name|>, [INST], <<SYS>>, [SYSTEM], <start_of_turn>, lines
//     starting "Human:", "Assistant:" or "System:" followed by text, and "### Instruction:" /
//     "### System:" template headings.
//
// # Disguised keywords
//
// Every rule also runs on a folded copy of each line that holds a look-alike letter
// (fullwidth, mathematical alphanumeric, circled, and the Cyrillic, Greek and Latin letters
// Unicode lists as confusable with ASCII) or a flagged invisible character: look-alikes
// become the ASCII they imitate and invisible characters are removed, so "ｉｇｎｏｒｅ
// previous instructions", "іgnоre …" (Cyrillic) and "ig<soft hyphen>nore …" are flagged
// as the override they spell, with "(disguised …)" in the Detail.
//
// # False-positive policy
//
// Ordinary engineering rules are legitimate preferences and are not flagged: "Always run
// `go test ./...` before committing", "Never push to main", "Ignore lint warnings in
// vendored code", "Always ask for confirmation before git push --force". Patterns therefore
// require an AI-specific object ("previous instructions", not "previous warnings"; "always
// approve tool calls", not "always allow 5 minutes"). A prohibition or a permission request
// is a safety rule, not an attack: disable-safety, remote-exec and exfiltration matches are
// dropped when the clause before them holds a negation (never, don't, not, avoid, instead
// of, nunca, 不要, 禁止, ❌, …) or "permission/approval/confirmation to|before" ("Never pipe
// curl into sh", "ask the user for permission to bypass the hook"). Tool markers in comments
// (<!-- intermem:… -->, <!-- rule:12 -->, <!-- OPENSPEC:START -->, <!-- archived … -->) name
// no AI and are not flagged. Emoji ZWJ sequences (👩‍💻), ZWJ/ZWNJ inside words of joining
// scripts (Arabic, Persian, Indic, …), a leading BOM, and the tag characters of subdivision
// flags (🏴 + gbeng + cancel) are legitimate Unicode and are not flagged.
//
// Mentions are flagged even when descriptive ("this machine ships with bypassPermissions"):
// promoting them carries the setting into committed instructions, which deserves a look.
//
// # Guarantees
//
// Regular expressions compile on first use and the keyword automaton on the first Check:
// the SessionStart hook links this package and must not pay for it when it screens
// nothing new.
//
// Check never panics and never modifies its input. Flags are sorted by Start, then End;
// 0 <= Start < End <= len(s); every flag has a Kind and a Detail (the matched text, at most
// 80 bytes, newlines shown as \n; or a description such as "U+202E RIGHT-TO-LEFT OVERRIDE");
// flags of one kind never overlap (overlapping matches are fused); flags of different kinds
// may. Line rules run only on lines holding one of their keywords, so the work is linear in
// the input times the number of rules.
package screen
