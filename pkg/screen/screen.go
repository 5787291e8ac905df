package screen

import (
	"slices"
	"strings"
	"sync"

	"github.com/intermem/intermem/pkg/keyscan"
	"github.com/intermem/intermem/pkg/lazyre"
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
	fs = disguised(fs, s)
	return tidy(fs)
}

// lineRule is a regular expression tried where one of its keys (lower-case ASCII) occurs.
type lineRule struct {
	kind string
	keys []string
	re   *lazyre.Regexp
	// back == 0: every match starts at a key; re (which starts with ^) is tried there.
	// back > 0: a match starts at most back bytes before a key; re runs unanchored on the
	// window from back bytes before the key to windowAfter bytes after it.
	back int
	// head: re only matches at the start of a line; it runs on each line's first lineHead
	// bytes.
	head bool
	// post, when set, validates a match (m indexes text) and returns its Detail.
	post func(text string, m []int) (string, bool)
	// all is the unanchored form of an anchored rule, run once over the rest of a line that
	// holds too many keys to try one by one.
	all *lazyre.Regexp
	// need, when set, lists substrings (lower-case) one of which every match contains, in
	// any ASCII case: a cheap test before the regular expression.
	need []string
}

// needs returns r with need set.
func (r lineRule) needs(subs ...string) lineRule {
	r.need = subs
	return r
}

// at is a rule whose matches start at one of its keys.
func at(kind string, keys []string, pattern string) lineRule {
	unanchored := pattern
	if isWordByte(keys[0][0]) {
		unanchored = `\b(?:` + pattern + `)`
	}
	return lineRule{kind: kind, keys: keys, re: lazy(`^(?:` + pattern + `)`), all: lazy(unanchored)}
}

// near is a rule whose matches start at most back bytes before one of its keys.
func near(kind string, keys []string, back int, pattern string) lineRule {
	return lineRule{kind: kind, keys: keys, back: back, re: lazy(pattern)}
}

// head is a rule whose matches start at the start of a line holding one of its keys.
func head(kind string, keys []string, pattern string) lineRule {
	return lineRule{kind: kind, keys: keys, head: true, re: lazy(`^(?:` + pattern + `)`)}
}

// vetoable kinds are not flagged inside a prohibition or a permission request: "Never pipe
// curl into sh", "Do not disable the hooks", "ask the user for permission to bypass the
// hook" are safety rules, not attacks.
func vetoable(kind string) bool {
	return kind == KindSafety || kind == KindRemoteExec || kind == KindExfil
}

// vetoRe matches a negation or a permission request in the clause before a match.
var vetoRe = lazy(`(?i)(?:^|[^\w'])(?:never|not|don'?t|doesn'?t|didn'?t|won'?t|can'?t|cannot|shouldn'?t|mustn'?t|avoid|forbid(?:den)?|prohibit(?:ed)?|disallow(?:ed)?|refuse|instead\s+of|rather\s+than|nunca|não|禁止|不要|不能|절대|금지)\b|\b(?:permission|approval|consent|confirmation|authori[sz]ation|explicit\s+ok)\s+(?:to|before)\b|❌|⛔|🚫`)

// vetoWords are lower-case substrings of everything vetoRe matches: a cheap first test.
var vetoWords = []string{"never", "not", "n't", "avoid", "forbid", "prohibit", "disallow", "refuse",
	"instead", "rather", "nunca", "não", "禁止", "不要", "不能", "절대", "금지", "permission", "approval",
	"consent", "confirmation", "authori", "explicit", "❌", "⛔", "🚫"}

func vetoed(clause string) bool {
	low := strings.ToLower(clause)
	for _, w := range vetoWords {
		if strings.Contains(low, w) {
			return vetoRe.MatchString(clause)
		}
	}
	return false
}

// clausePrefix returns the end of before from the start of its last clause.
func clausePrefix(before string) string {
	return before[strings.LastIndexAny(before, ".;:!?,()[]|")+1:]
}

const (
	// AI addressees: words that name the model reading an instruction file.
	addressee = `(?:ai|a\.i\.|assistant|claude|llm|chatgpt|gpt(?:-?\d[\w.-]*)?|copilot|codex|gemini|cursor|language model|the model|the agent|ai agent|coding agent)`
	qualifier = `(?:previous|prior|above|earlier|preceding|former|original|initial|existing|system|developer|other|all)`
	directive = `(?:instructions?|prompts?|directives?|guidelines|rules|context|messages?|commands|constraints|guardrails|policies|programming)`
	sensitive = `(?:(?:secrets?|credentials?|tokens?|api\s+keys?|passwords?|private\s+keys?|ssh\s+keys?|env(?:ironment)?(?:\s+variables?|\s+vars?)|id_rsa|id_ed25519|system\s+prompt|conversation|chat\s+history|transcripts?|memor(?:y|ies)|source\s+code|codebase|session\s+(?:data|cookies?))\b|\.env\b|~/\.ssh\b|\.aws/credentials\b)`
	shells    = `(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|source)\b`
)

var (
	overrideVerbs = []string{"ignore", "disregard", "forget", "override", "bypass", "skip"}
	promptVerbs   = []string{"ignore", "disregard", "forget", "override", "bypass", "reveal", "print", "leak", "output", "repeat", "dump", "show"}
	exfilVerbs    = []string{"send", "post", "upload", "exfiltrate", "transmit", "forward", "leak", "beacon", "report", "submit", "pipe", "copy", "email", "share"}
	fetchers      = []string{"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod"}
	negators      = []string{"never", "do not", "don't", "dont", "no need to", "without"}
)

// rules are the line rules, made by setup (ruleTable) on the first Check: building them
// (a few hundred strings, a lazy pattern each) cost every hook process at start-up.
var rules []lineRule

// ruleTable returns the line rules.
func ruleTable() []lineRule {
	return []lineRule{
		// Overriding the instructions the model was given.
		at(KindOverride, overrideVerbs,
			`(?i)(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|these|those|my|of|every)\s+)*`+qualifier+`\s+(?:(?:system|safety|user)\s+)?`+directive+`\b`),
		at(KindOverride, promptVerbs,
			`(?i)(?:ignore|disregard|forget|override|bypass|reveal|print|leak|output|repeat|dump|show)\s+(?:(?:the|your|its|any|my)\s+)?system\s+(?:prompt|message)s?\b`),
		at(KindOverride, []string{"you are now", "you are no longer", "you're now", "you're no longer"},
			`(?i)you(?:\s+are|'re)\s+(?:now\s+(?:a|an|the|in|my|dan|free|unrestricted|unfiltered|jailbroken|operating|acting|called|named|evil)|no\s+longer\s+(?:bound|restricted|limited|required|subject|obliged|an?\s+(?:ai|assistant)|claude))\b`),
		near(KindOverride, []string{"instruction"}, 24,
			`(?i)\b(?:new|updated|revised|real|actual|true|secret|hidden|additional)\s+(?:system\s+)?instructions?\s*[:：]`),
		at(KindOverride, []string{"new", "updated", "revised", "real", "actual", "true", "secret", "hidden", "replacement", "begin", "start", "end"},
			`(?i)(?:(?:new|updated|revised|real|actual|true|secret|hidden|replacement)\s+system\s+prompts?|(?:begin|start|end)(?:\s+of)?\s+(?:the\s+)?(?:new\s+)?system\s+prompt)\b`),
		at(KindOverride, []string{"jailbreak", "dan mode", "developer mode", "do anything now"},
			`(?i)(?:jailbreak(?:ing|ed)?|dan\s+mode|developer\s+mode\s+(?:enabled|on|activated)|do\s+anything\s+now)\b`),
		at(KindOverride, []string{"act", "behave", "respond", "pretend"},
			`(?i)(?:act|behave|respond|pretend)\s+(?:as\s+(?:if\s+)?)?(?:(?:that\s+)?you\s+(?:are|were|have)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|no\s+(?:restrictions|rules|guidelines|filters))\b`),
		at(KindOverride, []string{"forget everything", "forget all"},
			`(?i)forget\s+(?:everything|all)\s+(?:you\s+(?:know|were\s+told|have\s+been\s+told|learned)|above|before|previously|so\s+far)\b`),
		at(KindConceal, []string{"do not", "don't", "dont", "never", "without", "hide", "conceal", "keep"},
			`(?i)(?:(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|notify|alert|let|show)\s+(?:this\s+to\s+)?the\s+user|without\s+(?:telling|informing|notifying|alerting)\s+the\s+user|(?:hide|conceal|keep)\s+(?:this|these|it)\s+(?:hidden\s+)?from\s+the\s+user)\b`),

		// Chat-template role and tool-call markup.
		at(KindRoleTag, []string{"<system", "</system", "<assistant", "</assistant", "<human", "</human", "<instructions", "</instructions",
			"<user_query", "</user_query", "<tool_", "</tool_", "<function_", "</function_", "<invoke", "</invoke", "<parameter", "</parameter", "<", "</"},
			`</?(?:system|system-reminder|system_prompt|system-prompt|assistant|human|instructions|user_query|tool_result|tool_use|function_calls|function_results|invoke|parameter|antml:[a-z_]+)(?:\s[^<>\n]*)?>`),
		at(KindRoleTag, []string{"<|"}, `<\|[A-Za-z_]{2,32}\|>`),
		at(KindRoleTag, []string{"[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>", "<end_of_turn>"},
			`(?i)\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>`),
		head(KindRoleTag, []string{"human:", "assistant:", "system:"}, `(?:Human|Assistant|System):[ \t]+\S`),
		head(KindRoleTag, []string{"##"}, `#{2,4}[ \t]*(?:Instruction|System)[ \t]*:`),
		at(KindRoleTag, []string{"[system]", "[/system]"}, `(?i)\[/?SYSTEM\]`),

		// Fetch-and-run and decode-and-run.
		at(KindRemoteExec, fetchers,
			`(?i)(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+\S+\s+)?`+shells).needs("|"),
		near(KindRemoteExec, []string{"(curl", "( curl", "`curl", "(wget", "( wget", "`wget"}, 24,
			`(?i)(?:\b(?:(?:ba|z|k|da)?sh|source|eval)\s+(?:-c\s+)?["']?(?:\$\(|<\(|`+"`"+`)\s*(?:curl|wget)\b|\bpython[0-9.]*\s+-c\s+["']?\$\(\s*(?:curl|wget)\b)`),
		at(KindRemoteExec, []string{"base64"},
			`(?i)base64\s+(?:-d|--decode|-D)\b[^\n|]*\|\s*(?:sudo\s+)?`+shells).needs("|"),
		at(KindRemoteExec, []string{"eval", "exec", "powershell", "frombase64string", "iex", "invoke-expression"},
			`(?i)(?:eval\s*\(\s*(?:atob|Buffer\.from)\s*\(|exec\s*\(\s*(?:base64\.b64decode|__import__\(\s*['"]base64['"]\s*\)|codecs\.decode)|powershell(?:\.exe)?\b[^\n]*\s-(?:e|en|enc|enco|encod|encode|encoded|encodedcommand)\s+[A-Za-z0-9+/=]{20,}|FromBase64String\b[^\n]*\b(?:iex|Invoke-Expression)\b|(?:iex|Invoke-Expression)\b[^\n]*FromBase64String)`),

		// Remote access: reverse shells and keys planted in authorized_keys.
		near(KindRemoteExec, []string{"/dev/tcp/", "/dev/udp/"}, 64,
			`(?:\b(?:ba|z|k|da)?sh\s+-i\b[^\n]*/dev/(?:tcp|udp)/\S+|/dev/(?:tcp|udp)/\S+\s+0>&1)`),
		at(KindRemoteExec, []string{"nc", "ncat", "netcat"},
			`(?:nc|ncat|netcat)\b[^\n|;]*\s-[ce]\s*["']?/bin/(?:ba|z|k|da)?sh\b`),
		at(KindRemoteExec, []string{"mkfifo"}, `mkfifo\b[^\n]*\|\s*(?:nc|ncat|netcat|openssl\s+s_client)\b`).needs("|"),
		at(KindRemoteExec, []string{"socat"}, `(?i)socat\b[^\n]*\bexec:[^\n]*\b(?:ba|z|k|da)?sh\b`),
		near(KindRemoteExec, []string{"authorized_keys"}, 160,
			`(?:>>?\s*["']?[~$\w/.{}-]*authorized_keys\b|\bssh-(?:rsa|ed25519|dss)\s+AAAA[^\n]*authorized_keys\b)`),

		// Sending data out.
		at(KindExfil, exfilVerbs,
			`(?i)(?:send|post|upload|exfiltrate|transmit|forward|leak|beacon|report|submit|pipe|copy|email|share)\b[^\n]*?`+sensitive+`[^\n]*?\bto\s+(?:https?|ftp)://\S+`).needs("://"),
		at(KindExfil, exfilVerbs,
			`(?i)(?:send|upload|exfiltrate|transmit|leak|email|share)\s+(?:(?:all|any|the|your|their|its|every|each)\s+)*`+sensitive+`[^\n]*?\bto\b`).needs("to"),
		at(KindExfil, []string{"curl", "wget"},
			`(?i)(?:curl|wget)\b[^\n]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|--post-file|--body-file)[\s=]+["']?[^\s"']*(?:\.ssh/|id_rsa|id_ed25519|\.env\b|\.aws/|credentials|\.netrc|\.git-credentials|/etc/passwd|/etc/shadow|\.npmrc|\.pypirc|\.docker/config|\.kube/config)`).needs(".ssh/", "id_rsa", "id_ed25519", ".env", ".aws/", "credentials", ".netrc", "/etc/passwd", "/etc/shadow", ".npmrc", ".pypirc", ".docker/config", ".kube/config"),
		// A markdown image whose address is a template: rendering it sends whatever fills the
		// template to that host.
		at(KindExfil, []string{"!["},
			`!\[[^\]\n]{0,200}\]\(\s*<?https?://[^\s)>]*(?:\{\{?|\$\{|\$\(|<[A-Za-z_]|%7[Bb]|\[[A-Za-z_])`),
		near(KindExfil, []string{"webhook.site", "requestbin", "pipedream.net", "burpcollaborator", "interact.sh", ".oast.", "hookbin", "requestcatcher", "beeceptor"}, 64,
			`(?i)\b(?:webhook\.site|requestbin\.\w+|[\w-]+\.m\.pipedream\.net|[\w.-]*burpcollaborator\.net|[\w.-]*interact\.sh|[\w.-]+\.oast\.(?:fun|live|me|online|pro|site)|hookbin\.com|[\w.-]*requestcatcher\.com|[\w.-]*beeceptor\.com)\b`),

		// Switching off permissions and safety.
		at(KindSafety, []string{"--dangerously-", "bypasspermissions", "skipdangerousmodepermissionprompt", "--yolo"},
			`(?i)--dangerously-[a-z-]+|bypassPermissions\b|skipDangerousModePermissionPrompt\b|--yolo\b`),
		at(KindSafety, []string{"always", "auto-approve", "autoapprove", "approve"},
			`(?i)(?:always\s+(?:approve|say\s+yes)\b|always\s+(?:allow|accept|grant)\s+(?:(?:all|every|any|each|the)\s+)?(?:tools?|tool\s+calls?|commands?|permissions?|requests?|actions?|edits?|bash|writes?|operations?|prompts?)\b|auto-?approve\s+(?:all|every|everything|any)\b|approve\s+(?:all|every|everything|any)\s+(?:tool|command|permission|request|action|edit|change|operation)s?\b)`),
		at(KindSafety, negators,
			`(?i)(?:(?:never|do\s+not|don'?t|no\s+need\s+to)\s+(?:ask|prompt|wait|check)\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval|consent)|without\s+(?:asking\s+(?:for\s+)?(?:permission|confirmation|approval|consent)|(?:user\s+|explicit\s+)?(?:confirmation|approval|consent))|never\s+ask\s+permission)\b`),
		at(KindSafety, []string{"disable", "turn off", "bypass", "circumvent", "deactivate", "switch off", "get around", "work around", "ignore"},
			`(?i)(?:disable|turn\s+off|bypass|circumvent|deactivate|switch\s+off|get\s+around|work\s+around|ignore)\s+(?:(?:all|the|any|every|your|its|these)\s+)*(?:hooks?|sandbox(?:ing)?|safety\s+(?:checks?|filters?|guidelines|rules|measures|features)|guardrails?|permission\s+(?:checks?|prompts?|system|rules)|permissions|security\s+(?:checks?|controls?|scanning|policies)|content\s+filters?|approval\s+prompts?|confirmation\s+prompts?)\b`),
		at(KindSafety, []string{"bash("}, `(?i)Bash\(:?\*\)`),

		// Visible text that speaks to the model directly.
		at(KindAddressed, []string{"note", "message", "instruction", "reminder", "memo", "attention", "dear"},
			`(?i)(?:(?:note|message|instructions?|reminder|memo|attention)\s+(?:to|for)\s+(?:the\s+|any\s+)?|dear\s+)`+addressee+`\b\s*[:,\-–—!]`),
		head(KindAddressed, []string{"ai", "claude", "assistant", "llm", "gpt", "copilot", "codex", "gemini"},
			`(?i)[ \t]*(?:[-*+>][ \t]+)?(?:\*\*|__)?(?:ai|claude|assistant|llm|chatgpt|gpt-?\d*|copilot|codex|gemini)(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]+(?:please\s+)?(?:ignore|disregard|forget|always|never|you|do|don'?t|must|run|execute|send|reply|respond|say|print|output|include|pretend|act)\b`),

		// Hidden markdown: link-reference comments and hidden HTML elements.
		{kind: KindHidden, keys: []string{"]:"}, head: true, post: hiddenBody("markdown comment"),
			re: lazy(`^[ \t]*\[(?://|comment|_|#)\]:\s*<?#>?\s*(?:\((.*)\)|"(.*)"|'(.*)')[ \t]*$`)},
		{kind: KindHidden, keys: []string{"<div", "<span", "<p ", "<section", "<details", "<aside", "<font"}, post: hiddenBody("hidden HTML element"),
			re: lazy(`^(?i:<(div|span|p|section|details|aside|font)\b[^>\n]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?:\.0*)?\s*[;"'])[^>\n]*>([^<\n]+))`)},
	}
}

const (
	maxWholeLine = 4 << 10 // longer lines are searched in windows around keyword hits
	span         = 512     // longest match worth finding after a key
	lineHead     = 48      // a head rule's key must start within this many bytes of its line
	maxPrefix    = 200     // bytes of clause before a match that the veto looks at
	maxAttempts  = 16      // anchored tries per rule and line before one unanchored pass
)

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

var (
	keyAC    *keyscan.Matcher
	keyRules [][]int32 // key id -> rule indexes
	keyLen   []int
)

var setupOnce sync.Once

// setup builds the rules and their keyword automaton on the first Check, not at program
// start.
func setup() {
	rules = ruleTable()
	index := map[string]int32{}
	var keys []string
	for ri, r := range rules {
		for _, k := range r.keys {
			id, ok := index[k]
			if !ok {
				id = int32(len(keys))
				index[k] = id
				keys = append(keys, k)
				keyRules = append(keyRules, nil)
				keyLen = append(keyLen, len(k))
			}
			keyRules[id] = append(keyRules[id], int32(ri))
		}
	}
	keyAC = keyscan.New(keys)
	for i := range rules {
		if r := &rules[i]; r.all == nil && r.back == 0 && !r.head {
			r.all = lazy(strings.TrimPrefix(r.re.Expr(), "^"))
		}
	}
}

// lineRules tries each rule where one of its keys occurs, within the key's line: an
// anchored rule at the key (at most span bytes), a near rule on the key's line (or, in a
// long line, a window around it), a head rule on the start of the key's line. Work per rule
// and line is bounded: after maxAttempts tries, one unanchored pass covers the rest.
func lineRules(fs []Flag, s string) []Flag {
	setupOnce.Do(setup)
	hits := make([][]int, len(rules))
	keyAC.Scan(s, func(id int32, end int) {
		h := end - keyLen[id]
		if isWordByte(s[h]) && h > 0 && isWordByte(s[h-1]) {
			return // a key that starts with a letter must start a word
		}
		for _, ri := range keyRules[id] {
			hits[ri] = append(hits[ri], h)
		}
	})
	var lineStarts []int
	bounds := func(i int) (int, int) {
		if lineStarts == nil {
			lineStarts = append(lineStarts, 0)
			for j := 0; ; {
				k := strings.IndexByte(s[j:], '\n')
				if k < 0 {
					break
				}
				j += k + 1
				lineStarts = append(lineStarts, j)
			}
		}
		n, _ := slices.BinarySearch(lineStarts, i+1)
		ls, le := lineStarts[n-1], len(s)
		if n < len(lineStarts) {
			le = lineStarts[n] - 1
		}
		return ls, le
	}
	for ri := range rules {
		r := &rules[ri]
		hs := hits[ri]
		if len(hs) == 0 {
			continue
		}
		slices.Sort(hs)
		lastLine, covered, attempts := -1, -1, 0
		for _, h := range hs {
			if h < covered {
				continue
			}
			ls, le := bounds(h)
			if ls != lastLine {
				attempts = 0
			}
			var ws, we int
			anchored := false
			switch {
			case r.head:
				if ls == lastLine || h >= ls+lineHead {
					continue
				}
				ws, we, covered = ls, min(le, ls+span), le
			case r.back == 0 && attempts < maxAttempts:
				ws, we, anchored = h, min(le, h+span), true
				attempts++
			case r.back == 0:
				// Too many keys on this line: one unanchored pass over a long stretch.
				ws, we = h, min(le, h+64<<10)
				covered = we
			case le-ls <= maxWholeLine:
				if ls == lastLine {
					continue
				}
				ws, we, covered = ls, le, le
			default:
				ws, we = max(ls, h-r.back), min(le, h+span)
				covered = h + span/2
			}
			lastLine = ls
			if len(r.need) > 0 && !containsFold(s[ws:we], r.need) {
				continue
			}
			var ms [][]int
			switch {
			case anchored:
				if m := r.re.FindStringSubmatchIndex(s[ws:we]); m != nil {
					ms = [][]int{m}
				}
			case r.back == 0 && !r.head:
				ms = r.all.FindAllStringSubmatchIndex(s[ws:we], -1)
			default:
				ms = r.re.FindAllStringSubmatchIndex(s[ws:we], -1)
			}
			for _, m := range ms {
				start, end := ws+m[0], ws+m[1]
				if start >= end {
					continue
				}
				detail := quote(s[start:end])
				if r.post != nil {
					var ok bool
					if detail, ok = r.post(s[ws:we], m); !ok {
						continue
					}
				}
				if vetoable(r.kind) && vetoed(clausePrefix(s[max(ls, start-maxPrefix):start])) {
					continue
				}
				fs = append(fs, Flag{Kind: r.kind, Detail: detail, Start: start, End: end})
				if anchored {
					covered = max(covered, end)
				}
			}
		}
	}
	return fs
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
	return escapeControls(s)
}

// escapeControls writes a newline, carriage return and tab as \n, \r and
// \t (a strings.Replacer at package level would be built at every
// process's start).
func escapeControls(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

var (
	commentAddressed = lazy(`(?i)^\s*(?:note\s+(?:to|for)\s+(?:the\s+)?)?` + addressee + `\b\s*[:,\-–—]`)
	commentAddressee = lazy(`(?i)\b` + addressee + `\b`)
	commentImperativ = lazy(`(?i)\b(?:ignore|disregard|forget|always|never|must|do\s+not|don'?t|execute|run|send|upload|include|output|reply|respond|say|tell|print|pretend|act\s+as|you\s+(?:are|will|should|must))\b`)
)

// containsFold reports whether s contains one of subs (lower-case), ignoring ASCII case.
func containsFold(s string, subs []string) bool {
	for _, sub := range subs {
		if len(sub) > len(s) {
			continue
		}
		first, upper := sub[0], sub[0]
		if 'a' <= first && first <= 'z' {
			upper -= 'a' - 'A'
		}
		for i := 0; i+len(sub) <= len(s); {
			j := strings.IndexAny(s[i:len(s)-len(sub)+1], string([]byte{first, upper}))
			if j < 0 {
				break
			}
			if strings.EqualFold(s[i+j:i+j+len(sub)], sub) {
				return true
			}
			i += j + 1
		}
	}
	return false
}

// addresseeWords are lower-case substrings of every addressee: a cheap first test.
var addresseeWords = []string{"ai", "a.i.", "assistant", "claude", "llm", "gpt", "copilot", "codex", "gemini", "cursor", "model", "agent"}

// toAI reports whether hidden text is addressed to an AI, or gives orders in the same breath
// as naming one. Tool markers (intermem:…, rule:12, OPENSPEC:START) name no AI.
func toAI(body string) bool {
	if !containsFold(body, addresseeWords) {
		return false
	}
	return commentAddressed.MatchString(body) || commentAddressee.MatchString(body) && commentImperativ.MatchString(body)
}

// hiddenBody is the post check of the hidden-markdown rules: the first non-empty submatch
// is the hidden text.
func hiddenBody(what string) func(line string, m []int) (string, bool) {
	return func(line string, m []int) (string, bool) {
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g] < m[2*g+1] {
				body := line[m[2*g]:m[2*g+1]]
				if g == 1 && what == "hidden HTML element" {
					continue // the tag name
				}
				if toAI(body) {
					return what + " addressed to an AI: " + quote(strings.TrimSpace(body)), true
				}
				return "", false
			}
		}
		return "", false
	}
}

// comments flags HTML comments (which may span lines) addressed to an AI.
func comments(fs []Flag, s string) []Flag {
	flag := func(start, end int, body, what string) {
		if toAI(body) {
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
