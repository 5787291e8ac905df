package screen

import (
	"regexp"
	"slices"
	"strings"
)

// Flag is one reason a memory entry could be a prompt injection if promoted into a committed
// instruction file.
type Flag struct {
	Kind   string
	Detail string
	Start  int
	End    int
}

// Kinds of flags.
const (
	KindOverride    = "override"              // "ignore previous instructions", "you are now …"
	KindConceal     = "conceal"               // "do not tell the user"
	KindRoleTag     = "role-tag"              // <system>, </system-reminder>, <|im_start|>, [INST]
	KindHiddenChar  = "hidden-char"           // bidi controls, zero-width and tag characters
	KindRemoteExec  = "remote-exec"           // curl … | sh, base64 -d | bash
	KindExfil       = "exfiltration"          // send … to https://, curl -d @~/.ssh/id_rsa
	KindSafety      = "disable-safety"        // --dangerously-skip-permissions, never ask for confirmation
	KindHidden      = "hidden-instruction"    // <!-- AI: … -->, hidden HTML, [//]: # (…)
	KindAddressed   = "addressed-instruction" // Note to Claude: …
	maxDetail       = 80
	maxCommentBytes = 64 << 10
)

// Check reports the passages of s that could make a memory entry act as a prompt injection
// once promoted into an instruction file, sorted by Start (then End). Flags of one kind never
// overlap; flags of different kinds may.
func Check(s string) []Flag {
	var fs []Flag
	fs = hiddenChars(fs, s)
	fs = comments(fs, s)
	fs = lineRules(fs, s)
	return tidy(fs)
}

// lineRule is a regular expression run on each line that contains one of its keys
// (lower-case ASCII substrings; an empty list means every line).
type lineRule struct {
	kind string
	keys []string
	re   *regexp.Regexp
}

func lr(kind string, keys []string, pattern string) lineRule {
	return lineRule{kind: kind, keys: keys, re: regexp.MustCompile(pattern)}
}

// vetoable kinds are not flagged inside a prohibition or a permission request: "Never pipe
// curl into sh", "Do not disable the hooks", "ask the user for permission to bypass the
// hook" are safety rules, not attacks.
var vetoable = map[string]bool{KindSafety: true, KindRemoteExec: true, KindExfil: true}

// vetoRe matches a negation or a permission request in the clause before a match.
var vetoRe = regexp.MustCompile(`(?i)(?:^|[^\w'])(?:never|not|don'?t|doesn'?t|didn'?t|won'?t|can'?t|cannot|shouldn'?t|mustn'?t|avoid|forbid(?:den)?|prohibit(?:ed)?|disallow(?:ed)?|refuse|instead\s+of|rather\s+than|nunca|não|禁止|不要|不能|절대|금지)\b|\b(?:permission|approval|consent|confirmation|authori[sz]ation|explicit\s+ok)\s+(?:to|before)\b|❌|⛔|🚫`)

// clausePrefix returns the text of line before i back to the start of its clause.
func clausePrefix(line string, i int) string {
	j := strings.LastIndexAny(line[:i], ".;:!?,()[]|")
	return line[j+1 : i]
}

const (
	// AI addressees: words that name the model reading an instruction file.
	addressee = `(?:ai|a\.i\.|assistant|claude|llm|chatgpt|gpt(?:-?\d[\w.-]*)?|copilot|codex|gemini|cursor|language model|the model|the agent|ai agent|coding agent)`
	qualifier = `(?:previous|prior|above|earlier|preceding|former|original|initial|existing|system|developer|other|all)`
	directive = `(?:instructions?|prompts?|directives?|guidelines|rules|context|messages?|commands|constraints|guardrails|policies|programming)`
)

var rules = []lineRule{
	// Overriding the instructions the model was given.
	lr(KindOverride, []string{"ignore", "disregard", "forget", "override", "bypass", "skip"},
		`(?i)\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|these|those|my|of|every)\s+){0,3}`+qualifier+`\s+(?:(?:system|safety|user)\s+)?`+directive+`\b`),
	lr(KindOverride, []string{"system prompt", "system message"},
		`(?i)\b(?:ignore|disregard|forget|override|bypass|reveal|print|leak|output|repeat|dump|show)\s+(?:(?:the|your|its|any|my)\s+)?system\s+(?:prompt|message)s?\b`),
	lr(KindOverride, []string{"you are now", "you are no longer", "you're now"},
		`(?i)\byou(?:\s+are|'re)\s+(?:now\s+(?:a|an|the|in|my|dan|free|unrestricted|unfiltered|jailbroken|operating|acting|called|named|evil)|no\s+longer\s+(?:bound|restricted|limited|required|subject|obliged|an?\s+(?:ai|assistant)|claude))\b`),
	lr(KindOverride, []string{"instruction"},
		`(?i)\b(?:new|updated|revised|real|actual|true|secret|hidden|additional)\s+(?:system\s+)?instructions?\s*[:：]`),
	lr(KindOverride, []string{"jailbreak", "dan mode", "developer mode", "do anything now", "no restrictions", "unrestricted", "unfiltered"},
		`(?i)\b(?:jailbreak(?:ing|ed)?|dan\s+mode|developer\s+mode\s+(?:enabled|on|activated)|do\s+anything\s+now|(?:act|behave|respond|pretend)\s+(?:as\s+(?:if\s+)?)?(?:you\s+(?:are|were|have)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|no\s+restrictions))\b`),
	lr(KindOverride, []string{"forget everything", "forget all"},
		`(?i)\bforget\s+(?:everything|all)\s+(?:you\s+(?:know|were\s+told|have\s+been\s+told|learned)|above|before|previously|so\s+far)\b`),
	lr(KindConceal, []string{"user"},
		`(?i)\b(?:(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|notify|alert|let|show)\s+(?:this\s+to\s+)?the\s+user|without\s+(?:telling|informing|notifying|alerting)\s+the\s+user|(?:hide|conceal|keep)\s+(?:this|these|it)\s+(?:hidden\s+)?from\s+the\s+user)\b`),

	// Chat-template role and tool-call markup.
	lr(KindRoleTag, []string{"<"},
		`</?(?:system|system-reminder|system_prompt|system-prompt|assistant|human|instructions|user_query|tool_result|tool_use|function_calls|function_results|invoke|parameter|antml:[a-z_]+)(?:\s[^<>\n]*)?>`),
	lr(KindRoleTag, []string{"<|"}, `<\|[A-Za-z_]{2,32}\|>`),
	lr(KindRoleTag, []string{"[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>", "<end_of_turn>"},
		`(?i)\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>`),
	lr(KindRoleTag, []string{"human:", "assistant:", "system:"}, `(?m)^(?:Human|Assistant|System):[ \t]+\S`),

	// Fetch-and-run and decode-and-run.
	lr(KindRemoteExec, []string{"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod"},
		`(?i)\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+\S+\s+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|source)\b`),
	lr(KindRemoteExec, []string{"curl", "wget"},
		`(?i)(?:\b(?:(?:ba|z|k|da)?sh|source|eval)\s+(?:-c\s+)?["']?(?:\$\(|<\(|`+"`"+`)\s*(?:curl|wget)\b|\bpython[0-9.]*\s+-c\s+["']?\$\(\s*(?:curl|wget)\b)`),
	lr(KindRemoteExec, []string{"base64"},
		`(?i)\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,200}\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node|php|iex|source)\b`),
	lr(KindRemoteExec, []string{"atob", "b64decode", "frombase64string", "-enc", "codecs.decode"},
		`(?i)\b(?:eval\s*\(\s*(?:atob|Buffer\.from)\s*\(|exec\s*\(\s*(?:base64\.b64decode|__import__\(\s*['"]base64['"]\s*\)|codecs\.decode)|powershell(?:\.exe)?\b[^\n]{0,100}\s-(?:e|en|enc|enco|encod|encode|encoded|encodedcommand)\s+[A-Za-z0-9+/=]{20,}|FromBase64String\b[^\n]{0,200}\b(?:iex|Invoke-Expression)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,200}FromBase64String)`),

	// Sending data out.
	lr(KindExfil, []string{"http", "ftp://"},
		`(?i)\b(?:send|post|upload|exfiltrate|transmit|forward|leak|beacon|report|submit|pipe|copy)\b[^\n]{0,80}?(?:\b(?:secrets?|credentials?|tokens?|api\s+keys?|passwords?|private\s+keys?|ssh\s+keys?|env(?:ironment)?(?:\s+variables?|\s+vars?)|id_rsa|id_ed25519|system\s+prompt|conversation|chat\s+history|transcripts?|memor(?:y|ies)|source\s+code|codebase|session\s+(?:data|cookies?))\b|\.env\b|~/\.ssh\b|\.aws/credentials\b)[^\n]{0,80}?\bto\s+(?:https?|ftp)://\S+`),
	lr(KindExfil, []string{"send", "upload", "exfiltrate", "transmit", "leak", "email", "share"},
		`(?i)\b(?:send|upload|exfiltrate|transmit|leak|email|share)\s+(?:(?:all|any|the|your|their|its|every|each)\s+)*(?:(?:secrets?|credentials?|tokens?|api\s+keys?|passwords?|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+variables?|system\s+prompt|conversation|chat\s+history|transcripts?)\b|\.env\b|~/\.ssh\b|\.aws/credentials\b)[^\n]{0,60}?\bto\b`),
	lr(KindExfil, []string{"curl", "wget"},
		`(?i)\b(?:curl|wget)\b[^\n]{0,200}\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|--post-file|--body-file)[\s=]+["']?[^\s"']*(?:\.ssh/|id_rsa|id_ed25519|\.env\b|\.aws/|credentials|\.netrc|\.git-credentials|/etc/passwd|/etc/shadow|\.npmrc|\.pypirc|\.docker/config|\.kube/config)`),
	lr(KindExfil, []string{"webhook.site", "requestbin", "pipedream.net", "burpcollaborator", "interact.sh", "oast.", "hookbin", "requestcatcher", "beeceptor"},
		`(?i)\b(?:webhook\.site|requestbin\.\w+|[\w-]+\.m\.pipedream\.net|[\w.-]*burpcollaborator\.net|[\w.-]*interact\.sh|[\w.-]+\.oast\.(?:fun|live|me|online|pro|site)|hookbin\.com|[\w.-]*requestcatcher\.com|[\w.-]*beeceptor\.com)\b`),

	// Switching off permissions and safety.
	lr(KindSafety, []string{"dangerously", "bypasspermissions", "skipdangerousmodepermissionprompt", "--yolo"},
		`(?i)--dangerously-[a-z-]+|\bbypassPermissions\b|\bskipDangerousModePermissionPrompt\b|(?:^|\s)--yolo\b`),
	lr(KindSafety, []string{"approve", "allow", "accept", "say yes", "grant"},
		`(?i)(?:\balways\s+(?:approve|say\s+yes)\b|\balways\s+(?:allow|accept|grant)\s+(?:(?:all|every|any|each|the)\s+)?(?:tools?|tool\s+calls?|commands?|permissions?|requests?|actions?|edits?|bash|writes?|operations?|prompts?)\b|(?:^|[^-\w])auto-?approve\s+(?:all|every|everything|any)\b|\bapprove\s+(?:all|every|everything|any)\s+(?:tool|command|permission|request|action|edit|change|operation)s?\b)`),
	lr(KindSafety, []string{"ask", "prompt", "wait", "permission", "confirmation", "approval"},
		`(?i)\b(?:(?:never|do\s+not|don'?t|no\s+need\s+to)\s+(?:ask|prompt|wait|check)\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval|consent)|without\s+(?:asking\s+(?:for\s+)?(?:permission|confirmation|approval|consent)|(?:user\s+|explicit\s+)?(?:confirmation|approval|consent))|never\s+ask\s+permission)\b`),
	lr(KindSafety, []string{"hook", "sandbox", "safety", "guardrail", "permission", "security", "filter", "approval", "confirmation"},
		`(?i)\b(?:disable|turn\s+off|bypass|circumvent|deactivate|switch\s+off|get\s+around|work\s+around|ignore)\s+(?:(?:all|the|any|every|your|its|these)\s+)*(?:hooks?|sandbox(?:ing)?|safety\s+(?:checks?|filters?|guidelines|rules|measures|features)|guardrails?|permission\s+(?:checks?|prompts?|system|rules)|permissions|security\s+(?:checks?|controls?|scanning|policies)|content\s+filters?|approval\s+prompts?|confirmation\s+prompts?)\b`),
	lr(KindSafety, []string{"bash(*)", "bash(:*)"}, `(?i)\bBash\(:?\*\)`),

	// Visible text that speaks to the model directly.
	lr(KindAddressed, []string{"note", "message", "instruction", "reminder", "memo", "dear", "attention"},
		`(?i)\b(?:(?:note|message|instructions?|reminder|memo|attention)\s+(?:to|for)\s+(?:the\s+|any\s+)?|dear\s+)`+addressee+`\b\s*[:,\-–—!]`),
	lr(KindAddressed, []string{"ai", "claude", "assistant", "llm", "gpt", "copilot", "codex", "gemini"},
		`(?im)^[ \t]*(?:[-*+>][ \t]+)?(?:\*\*|__)?(?:ai|claude|assistant|llm|chatgpt|gpt-?\d*|copilot|codex|gemini)(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]+(?:please\s+)?(?:ignore|disregard|forget|always|never|you|do|don'?t|must|run|execute|send|reply|respond|say|print|output|include|pretend|act)\b`),
}

// lineRules runs every line rule on the lines that contain one of its keys.
func lineRules(fs []Flag, s string) []Flag {
	lower := foldASCII(s)
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line, low := s[start:end], lower[start:end]
		for i := range rules {
			r := &rules[i]
			if !containsAny(low, r.keys) {
				continue
			}
			for _, m := range r.re.FindAllStringIndex(line, -1) {
				if vetoable[r.kind] && vetoRe.MatchString(clausePrefix(line, m[0])) {
					continue
				}
				fs = append(fs, Flag{Kind: r.kind, Detail: quote(line[m[0]:m[1]]), Start: start + m[0], End: start + m[1]})
			}
		}
		start = end + 1
	}
	return fs
}

func containsAny(s string, keys []string) bool {
	if len(keys) == 0 {
		return true
	}
	for _, k := range keys {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// foldASCII lower-cases ASCII letters only, so offsets into the result are offsets into s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// quote renders matched text for Flag.Detail: at most maxDetail bytes (cut on a rune
// boundary), control characters shown as \n, \t….
func quote(s string) string {
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

var (
	commentAddressed = regexp.MustCompile(`(?i)^\s*(?:note\s+(?:to|for)\s+(?:the\s+)?)?` + addressee + `\b\s*[:,\-–—]`)
	commentAddressee = regexp.MustCompile(`(?i)\b` + addressee + `\b`)
	commentImperativ = regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|always|never|must|do\s+not|don'?t|execute|run|send|upload|include|output|reply|respond|say|tell|print|pretend|act\s+as|you\s+(?:are|will|should|must))\b`)
	linkComment      = regexp.MustCompile(`(?m)^[ \t]*\[(?://|comment|_|#)\]:\s*<?#>?\s*(?:\((.*)\)|"(.*)"|'(.*)')[ \t]*$`)
	hiddenHTML       = regexp.MustCompile(`(?i)<(div|span|p|section|details|aside|font)\b[^>\n]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?:\.0*)?\s*[;"'])[^>\n]*>([^<]{1,1000})`)
)

// comments flags HTML comments, markdown link-reference comments ([//]: # (…)) and hidden
// HTML elements whose text addresses an AI, or gives it orders in the same breath as naming
// it. Tool markers (<!-- intermem:… -->, <!-- rule:12 -->, <!-- OPENSPEC:START -->) name no
// addressee and are not flagged.
func comments(fs []Flag, s string) []Flag {
	flag := func(start, end int, body, what string) {
		if commentAddressed.MatchString(body) || commentAddressee.MatchString(body) && commentImperativ.MatchString(body) {
			fs = append(fs, Flag{Kind: KindHidden, Detail: what + " addressed to an AI: " + quote(strings.TrimSpace(body)), Start: start, End: end})
		}
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "<!--")
		if j < 0 {
			break
		}
		open := i + j
		k := strings.Index(s[open+4:min(len(s), open+4+maxCommentBytes)], "-->")
		end := min(len(s), open+4+maxCommentBytes)
		bodyEnd := end
		if k >= 0 {
			bodyEnd = open + 4 + k
			end = bodyEnd + 3
		}
		flag(open, end, s[open+4:bodyEnd], "HTML comment")
		i = end
	}
	if strings.Contains(s, "]:") {
		for _, m := range linkComment.FindAllStringSubmatchIndex(s, -1) {
			for g := 1; g <= 3; g++ {
				if m[2*g] >= 0 {
					flag(m[0], m[1], s[m[2*g]:m[2*g+1]], "markdown comment")
				}
			}
		}
	}
	if strings.Contains(s, "<") {
		for _, m := range hiddenHTML.FindAllStringSubmatchIndex(s, -1) {
			flag(m[0], m[1], s[m[4]:m[5]], "hidden HTML element")
		}
	}
	return fs
}

// tidy sorts flags by Start, then End, then Kind, and fuses overlapping flags of one kind.
func tidy(fs []Flag) []Flag {
	if len(fs) == 0 {
		return nil
	}
	slices.SortFunc(fs, func(a, b Flag) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return a.End - b.End
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	out := fs[:0]
	last := map[string]int{} // kind -> index in out
	for _, f := range fs {
		if i, ok := last[f.Kind]; ok && f.Start < out[i].End {
			if f.End > out[i].End {
				out[i].End = f.End
			}
			continue
		}
		last[f.Kind] = len(out)
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Flag) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	return out
}
