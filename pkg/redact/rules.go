package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// buildRules returns every detector, most specific first: when two findings overlap, the one
// from the earlier rule names the merged finding.
func buildRules() []*rule {
	var rs []*rule
	add := func(r *rule) { rs = append(rs, r) }
	// tok is a token with a recognisable shape that starts with one of its anchors: group 1
	// of pattern is the secret; edge bytes may not touch it on either side; ok, if set,
	// validates the value.
	tokw := func(kind string, anchors []string, back, span int, pattern string, edge *byteSet, ok func(v string) bool) {
		r := &rule{kind: kind, anchors: anchors, re: regexp.MustCompile(pattern), group: 1, edge: edge, back: back, span: span}
		if p, _ := r.re.LiteralPrefix(); p == "" && back == 0 {
			// No literal prefix for regexp to skip to: match at the anchor instead.
			r.re, r.anchored = regexp.MustCompile("^(?:"+pattern+")"), true
		}
		if ok != nil {
			r.check = func(s string, m []int) (Finding, bool) {
				start, end := m[2], m[3]
				if start < 0 || (edge != nil && !edge.clear(s, start, end)) || !ok(s[start:end]) {
					return Finding{}, false
				}
				return Finding{kind, start, end}, true
			}
		}
		add(r)
	}
	tok := func(kind string, anchors []string, pattern string, edge *byteSet) {
		tokw(kind, anchors, 0, 1024, pattern, edge, nil)
	}
	tokc := func(kind string, anchors []string, pattern string, edge *byteSet, ok func(v string) bool) {
		tokw(kind, anchors, 0, 1024, pattern, edge, ok)
	}
	// line is a rule whose anchors are context words: re runs on the whole line.
	line := func(kind string, anchors []string, pattern string, check func(s string, m []int) (Finding, bool)) {
		add(&rule{kind: kind, anchors: anchors, re: regexp.MustCompile(pattern), check: check, group: 1})
	}

	// Private keys: the whole PEM block, which spans lines; the first line of a key's
	// base64 body on its own (a block split over several memory entries).
	add(&rule{kind: "private-key", anchors: []string{"-----BEGIN "}, hit: findPEM})
	add(&rule{kind: "private-key", anchors: derKeyPrefixes, hit: derKeyAt})
	// A service-account JSON "private_key" string (PEM with escaped newlines), and its id.
	tokw("private-key", []string{`"private_key"`}, 0, 16<<10, `"private_key"\s*:\s*"((?:[^"\\\n]|\\.){16,})"`, nil, nil)
	tok("private-key-id", []string{`"private_key_id"`}, `"private_key_id"\s*:\s*"([0-9a-f]{20,64})"`, nil)
	tok("age-secret-key", []string{"AGE-SECRET-KEY-1"}, `(AGE-SECRET-KEY-1[0-9A-Z]{58})`, alnum)

	// AI providers. Anthropic and OpenRouter before the generic OpenAI "sk-" shape.
	tok("anthropic-key", []string{"sk-ant-"}, `(sk-ant-(?:api|admin|sid|oat|ort)\d{2}-[A-Za-z0-9_-]{20,})`, tokenish)
	tok("openrouter-key", []string{"sk-or-v1-"}, `(sk-or-v1-[a-f0-9]{64})`, tokenish)
	tokc("openai-key", []string{"sk-"}, `(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,})`, tokenish, func(v string) bool {
		return classes(v[3:]) >= 2 && !strings.HasPrefix(v, "sk-ant-")
	})
	tok("groq-key", []string{"gsk_"}, `(gsk_[A-Za-z0-9]{48,})`, word)
	tok("xai-key", []string{"xai-"}, `(xai-[A-Za-z0-9]{70,})`, tokenish)
	tok("perplexity-key", []string{"pplx-"}, `(pplx-[A-Za-z0-9]{40,})`, tokenish)
	tokc("huggingface-token", []string{"hf_"}, `(hf_[A-Za-z0-9]{34,})`, word, mixedCase)
	tok("replicate-token", []string{"r8_"}, `(r8_[A-Za-z0-9]{37})`, word)

	// Code hosting and CI.
	tok("github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, `(gh[pousr]_[A-Za-z0-9]{36,251})`, word)
	tok("github-token", []string{"github_pat_"}, `(github_pat_[A-Za-z0-9_]{36,244})`, word)
	tok("gitlab-token", []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glft-", "glsoat-"},
		`(gl(?:pat|dt|rt|ptt|cbt|oas|ft|soat)-[A-Za-z0-9_-]{20,})`, tokenish)
	tok("npm-token", []string{"npm_"}, `(npm_[A-Za-z0-9]{36})`, word)
	tok("pypi-token", []string{"pypi-AgE"}, `(pypi-AgE[A-Za-z0-9_-]{50,})`, tokenish)
	tok("dockerhub-token", []string{"dckr_pat_"}, `(dckr_pat_[A-Za-z0-9_-]{20,})`, tokenish)
	tok("atlassian-token", []string{"ATATT3"}, `(ATATT3[A-Za-z0-9_=-]{100,})`, tokenish)
	tok("postman-key", []string{"PMAK-"}, `(PMAK-[a-f0-9]{24}-[a-f0-9]{34})`, tokenish)
	tok("linear-key", []string{"lin_api_", "lin_oauth_"}, `(lin_(?:api|oauth)_[A-Za-z0-9]{40})`, word)
	tok("figma-token", []string{"figd_"}, `(figd_[A-Za-z0-9_-]{30,})`, tokenish)
	tok("sentry-token", []string{"sntrys_eyJ"}, `(sntrys_eyJ[A-Za-z0-9_=+/-]{30,})`, tokenish)
	tok("sentry-token", []string{"sntryu_"}, `(sntryu_[a-f0-9]{64})`, word)

	// Chat and messaging.
	tokc("slack-token", []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxr-", "xoxs-", "xoxe-"},
		`(xox[abposre]-[A-Za-z0-9-]{10,})`, tokenish, func(v string) bool { return strings.ContainsAny(v[5:], "0123456789") })
	tok("slack-token", []string{"xapp-"}, `(xapp-\d-[A-Za-z0-9-]{20,})`, tokenish)
	tok("slack-webhook", []string{"hooks.slack.com/"}, `hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})`, tokenish)
	add(&rule{kind: "discord-token", anchors: []string{"."}, hit: discordAt})
	tokw("discord-webhook", []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}, 0, 1024, `discord(?:app)?\.com/api/webhooks/\d+/([A-Za-z0-9_-]{60,})`, tokenish, nil)
	add(&rule{kind: "telegram-bot-token", anchors: []string{":AA"}, back: 12, span: 40, re: regexp.MustCompile(`(\d{8,12}:AA[A-Za-z0-9_-]{33})`),
		check: func(s string, m []int) (Finding, bool) {
			start, end := m[2], m[3]
			// The API puts the token straight after "bot": https://api.telegram.org/bot<token>/…
			left := start == 0 || !tokenish.has(s[start-1]) || start >= 3 && s[start-3:start] == "bot"
			if !left || end < len(s) && tokenish.has(s[end]) {
				return Finding{}, false
			}
			return Finding{"telegram-bot-token", start, end}, true
		}})
	tok("twilio-api-key", hexAfter("SK"), `(SK[0-9a-f]{32})`, alnum)
	tok("twilio-account-sid", hexAfter("AC"), `(AC[0-9a-f]{32})`, alnum)
	line("twilio-account-sid", []string{"twilio"}, `(AC[0-9a-f]{32})`, func(s string, m []int) (Finding, bool) {
		return Finding{"twilio-account-sid", m[2], m[3]}, alnum.clear(s, m[2], m[3])
	})
	tok("sendgrid-key", []string{"SG."}, `(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})`, tokenish)
	tok("mailgun-key", []string{"key-"}, `(key-[0-9a-f]{32})`, newByteSet("a-z", "A-Z", "0-9", "_-./"))
	add(&rule{kind: "mailchimp-key", anchors: []string{"-us"}, back: 32, span: 40, anchored: true,
		re: regexp.MustCompile(`^([0-9a-f]{32}-us\d{1,2})`), group: 1, edge: alnum})

	// Payments and commerce.
	tok("stripe-key", []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"}, `((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247})`, word)
	tok("stripe-key", []string{"whsec_"}, `(whsec_[A-Za-z0-9]{24,})`, word)
	tok("shopify-token", []string{"shpat_", "shpss_", "shpca_", "shppa_"}, `(shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})`, word)
	tok("square-token", []string{"sq0csp-", "sq0atp-"}, `(sq0(?:csp|atp)-[A-Za-z0-9_-]{22,})`, tokenish)
	tokc("meta-token", []string{"EAA"}, `(EAA[A-Za-z0-9]{80,})`, word, mixedCase)

	// Cloud and infrastructure.
	tok("aws-access-key", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, `((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})`, alnum)
	// Labelled, also in prose ("Secret access key wJalr…", "the AWS secret is …"): the
	// value's shape (40 base64 bytes, three classes) is what makes a blank enough.
	line("aws-secret-key", []string{"secret_access_key", "secret-access-key", "secretaccesskey", "secret access key", "aws_secret", "aws secret"},
		`(?i)(?:aws[_ .-]?secret(?:[_ .-]?access)?(?:[_ .-]?key)?|secret[_ .-]?access[_ .-]?key)["'\x60*]*(?:\s*(?::=|=>|[:=：]|\bis\b:?)\s*|\s+)["'\x60*]*([A-Za-z0-9/+]{40})`,
		func(s string, m []int) (Finding, bool) {
			ok := base64ch.clear(s, m[2], m[3]) && classes(s[m[2]:m[3]]) >= 3
			return Finding{"aws-secret-key", m[2], m[3]}, ok
		})
	add(&rule{kind: "aws-secret-key", anchors: []string{"AKIA", "ASIA"}, lineOK: awsKeyIDRe.MatchString,
		re: regexp.MustCompile(`[A-Za-z0-9/+]{40,}`), check: awsSecretNearKeyID})
	tokc("okta-token", []string{"SSWS"}, `(?i:SSWS)[ \t]+([A-Za-z0-9_-]{20,})`, tokenish, func(v string) bool { return classes(v) >= 2 })
	tok("aws-presigned-signature", []string{"X-Amz-Signature="}, `X-Amz-Signature=([0-9a-f]{64})`, alnum)
	tok("google-api-key", []string{"AIza"}, `(AIza[0-9A-Za-z_-]{35})`, tokenish)
	tok("google-oauth-secret", []string{"GOCSPX-"}, `(GOCSPX-[A-Za-z0-9_-]{28})`, tokenish)
	tok("google-oauth-token", []string{"ya29."}, `(ya29\.[0-9A-Za-z_-]{20,})`, tokenish)
	tok("google-oauth-token", []string{"1//0"}, `(1//0[0-9A-Za-z_-]{40,})`, newByteSet("a-z", "A-Z", "0-9", "_-/"))
	tok("azure-storage-key", []string{"AccountKey=", "SharedAccessKey="}, `(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`, base64ch)
	add(&rule{kind: "azure-sas", anchors: []string{"sig="}, span: 1024, re: regexp.MustCompile(`sig=([A-Za-z0-9%+/=]{20,})`),
		check: func(s string, m []int) (Finding, bool) {
			// A query parameter (…&sig=…) or a connection-string field (…;sig=…).
			if m[0] == 0 || strings.IndexByte("?&;", s[m[0]-1]) < 0 || !base64ch.clear(s, m[2], m[3]) {
				return Finding{}, false
			}
			return Finding{"azure-sas", m[2], m[3]}, true
		}})
	tok("digitalocean-token", []string{"dop_v1_", "doo_v1_", "dor_v1_"}, `(do[opr]_v1_[a-f0-9]{64})`, word)
	tok("heroku-key", []string{"HRKU-"}, `(HRKU-[A-Za-z0-9_-]{20,})`, tokenish)
	tok("vault-token", []string{"hvs.", "hvb.", "hvr."}, `(hv[sbr]\.[A-Za-z0-9_-]{24,})`, tokenish)
	tok("doppler-token", []string{"dp.st.", "dp.pt.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."},
		`(dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44})`, word)
	tok("databricks-token", []string{"dapi"}, `(dapi[a-f0-9]{32}(?:-\d)?)`, word)
	tok("supabase-token", []string{"sbp_"}, `(sbp_(?:oauth_)?[a-f0-9]{40})`, word)
	tok("supabase-token", []string{"sb_secret_"}, `(sb_secret_[A-Za-z0-9_-]{20,})`, tokenish)
	tok("notion-token", []string{"secret_"}, `(secret_[A-Za-z0-9]{43})`, word)
	tok("notion-token", []string{"ntn_"}, `(ntn_[A-Za-z0-9]{40,50})`, word)
	tok("tailscale-key", []string{"tskey-"}, `(tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,})`, tokenish)
	tok("pulumi-token", []string{"pul-"}, `(pul-[a-f0-9]{40})`, tokenish)
	add(&rule{kind: "terraform-token", anchors: []string{".atlasv1."}, back: 14, span: 1024, anchored: true,
		re: regexp.MustCompile(`^([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,})`), group: 1, edge: tokenish})
	tok("grafana-token", []string{"glsa_"}, `(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`, word)
	tok("grafana-token", []string{"glc_"}, `(glc_[A-Za-z0-9+/]{32,}={0,2})`, base64ch)
	tok("newrelic-key", []string{"NRAK-"}, `(NRAK-[A-Z0-9]{27})`, alnum)
	tok("flyio-token", []string{"fo1_"}, `(fo1_[A-Za-z0-9_-]{40,})`, tokenish)
	tok("flyio-token", []string{"fm1_", "fm2_"}, `(fm[12]_[A-Za-z0-9+/=_-]{50,})`, tokenish)
	tok("planetscale-token", []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"}, `(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,})`, tokenish)

	// JSON Web Tokens (and Mapbox secret tokens, which are JWT-like).
	tok("mapbox-token", []string{"sk.eyJ"}, `(sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})`, tokenish)
	tokw("jwt", []string{"eyJ"}, 0, 16<<10, `(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)`, newByteSet("a-z", "A-Z", "0-9", "_-."), nil)

	// Credentials by context: URLs, HTTP headers, command lines, .netrc.
	add(&rule{kind: "url-credentials", anchors: []string{"://"}, hit: urlAt})
	add(&rule{kind: "bearer-token", anchors: []string{"bearer"}, span: 1024, anchored: true,
		re:    regexp.MustCompile(`^(?i:bearer)[ \t]+([A-Za-z0-9._~+/-]+=*)`),
		check: headerValue("bearer-token")})
	add(&rule{kind: "basic-auth", anchors: []string{"basic"}, span: 1024, anchored: true,
		re:    regexp.MustCompile(`^(?i:basic)[ \t]+([A-Za-z0-9+/]{6,}={0,2})`),
		check: basicAuth})
	add(&rule{kind: "authorization", anchors: []string{"authorization"}, span: 1024, anchored: true,
		re:    regexp.MustCompile(`^(?i:authorization)["']?[ \t]*[:=][ \t]*["']?(?:(?i:token|bot|apikey|api-key|sso-key|ssws|key)[ \t]+)?([^\s"',;]{8,})`),
		check: headerValue("authorization")})
	add(&rule{kind: "password", anchors: []string{"-u", "--user"}, span: 1024, anchored: true,
		re:    regexp.MustCompile(`^(?:-u|--user)(?:[ \t]+|=)?["']?([^\s:'"]+):([^\s'"]+)`),
		check: cliUserPass})
	add(&rule{kind: "password", anchors: []string{"-p'", `-p"`}, span: 1024, anchored: true,
		re:    regexp.MustCompile(`^-p(?:'([^'\n]{1,256})'|"([^"\n]{1,256})")`),
		check: cliDashP})
	add(&rule{kind: "password", anchors: []string{"mysql", "mariadb", "sshpass"}, lineOK: attachedPContext.MatchString, group: 1,
		re:    regexp.MustCompile(`(?:^|[ \t])-p(?:'([^'\n]{1,256})'|"([^"\n]{1,256})"|([^\s'"]{1,256}))`),
		check: cliDashP})
	add(&rule{kind: "password", anchors: []string{"sshpass", "docker login", "podman login", "nerdctl login", "registry login"}, lineOK: spacedPContext.MatchString, group: 1,
		re: regexp.MustCompile(`(?:^|[ \t])-p[ \t]+('[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"]{1,256})`),
		check: func(s string, m []int) (Finding, bool) {
			return cliDashP(s, []int{m[0], m[1], -1, -1, -1, -1, -1, -1, m[2], m[3]})
		}})
	add(&rule{kind: "password", anchors: []string{"redis-cli"}, group: 1,
		re:    regexp.MustCompile(`(?:^|[ \t])(?:-a|--pass|--user[ \t]+\S+[ \t]+--pass)[ \t]+('[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"]{1,256})`),
		check: lenientFlag})
	line("password", []string{"machine"}, `(?i)\bmachine[ \t]+\S+[ \t]+(?:login[ \t]+\S+[ \t]+)?password[ \t]+(\S+)`, lenient("password", 1))
	// A user and password pair after a credential label: "Auth: admin@x.local / Jake@2024!",
	// "Login: deploy:S3cret-99", "**Credentials** — ops / hunter2!". The user is kept; the
	// password must look like one (two character classes, not a path or a placeholder).
	line("password", []string{"auth", "login", "credential", "creds", "account"},
		`(?i)\b(?:auth|login|credentials?|creds|account)\b\**[ \t]*(?:[:=]|—|–|-)[ \t]*\**[ \t]*[^\s/:]{1,64}(?:[ \t]+/[ \t]+|:|[ \t]+:[ \t]+)([^\s]{4,128})`,
		func(s string, m []int) (Finding, bool) {
			start, end := m[2], m[3]
			v := strings.TrimRight(s[start:end], ".,;)")
			end = start + len(v)
			if !lenientOK(v, 6) || classes(v) < 2 || isPathLike(v) || strings.Contains(v, "://") {
				return Finding{}, false
			}
			return Finding{"password", start, end}, true
		})

	// Generic: a value after a key-like label, in prose, YAML, JSON, env files, code, flags.
	add(&rule{kind: "secret", anchors: labelAnchors, hit: labelAt})
	return rs
}

// classes counts the character classes (lower, upper, digit, other) present in v.
func classes(v string) int {
	var l, u, d, o int
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z':
			l = 1
		case 'A' <= c && c <= 'Z':
			u = 1
		case '0' <= c && c <= '9':
			d = 1
		default:
			o = 1
		}
	}
	return l + u + d + o
}

func mixedCase(v string) bool {
	return strings.IndexFunc(v, func(r rune) bool { return 'a' <= r && r <= 'z' }) >= 0 &&
		strings.IndexFunc(v, func(r rune) bool { return 'A' <= r && r <= 'Z' }) >= 0
}

// discordID checks that the first part of a Discord-token-shaped value is the base64 of a
// numeric user id, as in every real bot token.
func discordID(v string) bool {
	head, _, _ := strings.Cut(v, ".")
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	if err != nil || len(b) < 17 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// discordAt is the hit matcher for "." at the end of a Discord bot token's first part:
// id.timestamp.hmac, 24–26, 6 and 27–38 URL-safe base64 bytes, the id decoding to digits.
// The dot is everywhere in prose, so everything is checked byte by byte, cheapest first.
func discordAt(_ *scanMemo, s string, start, _ int) (Finding, bool) {
	if start+8 >= len(s) || s[start+7] != '.' {
		return Finding{}, false
	}
	for k := start + 1; k < start+7; k++ {
		if !tokenish.has(s[k]) {
			return Finding{}, false
		}
	}
	a := start
	for a > 0 && start-a <= 26 && tokenish.has(s[a-1]) {
		a--
	}
	if n := start - a; n < 24 || n > 26 || a > 0 && tokenish.has(s[a-1]) || s[a] < 'M' || s[a] > 'O' {
		return Finding{}, false
	}
	b := start + 8
	for b < len(s) && b-start-8 <= 38 && tokenish.has(s[b]) {
		b++
	}
	if n := b - start - 8; n < 27 || n > 38 || b < len(s) && tokenish.has(s[b]) || !discordID(s[a:start]) {
		return Finding{}, false
	}
	return Finding{"discord-token", a, b}, true
}

// derKeyPrefixes start the base64 of a DER private key: PKCS#1 RSA and PKCS#8 keys
// ("MII…IBAA", "MII…IBAD"), PKCS#8 EC ("MIG…AgEA"), SEC1 EC, PKCS#8 Ed25519, OpenSSH.
var derKeyPrefixes = []string{"MII", "MIG", "MHcCAQEE", "MC4CAQAwBQYDK2Vw", "b3BlbnNzaC1rZXktdjE"}

// derKeyAt accepts a run of at least 40 base64 bytes that starts like a DER private key
// (public keys and certificates start differently: "MIIBIjAN", "MIIDdzCC").
func derKeyAt(_ *scanMemo, s string, start, _ int) (Finding, bool) {
	if start > 0 && base64ch.has(s[start-1]) && !(start >= 2 && s[start-2:start] == `\n`) {
		return Finding{}, false
	}
	e := start
	for e < len(s) && e-start < maxPEM && base64ch.has(s[e]) {
		e++
	}
	for k := 0; k < 2 && e < len(s) && s[e] == '='; k++ {
		e++
	}
	v := s[start:e]
	if len(v) < 40 || e < len(s) && (base64ch.has(s[e]) || s[e] == '=') {
		return Finding{}, false
	}
	switch {
	case strings.HasPrefix(v, "MII"):
		if v[6:10] != "IBAA" && v[6:10] != "IBAD" {
			return Finding{}, false
		}
	case strings.HasPrefix(v, "MIG"):
		if v[4:8] != "AgEA" {
			return Finding{}, false
		}
	case strings.HasPrefix(v, "MHcCAQEE"), strings.HasPrefix(v, "MC4CAQAwBQYDK2Vw"), strings.HasPrefix(v, "b3BlbnNzaC1rZXktdjE"):
	default:
		return Finding{}, false
	}
	return Finding{"private-key", start, e}, true
}

// lenientFlag accepts the value of a password flag (group 1, possibly quoted).
func lenientFlag(s string, m []int) (Finding, bool) {
	start, end, ok := valueSpan(s, m[2], m[3], false)
	if !ok || !lenientOK(s[start:end], 4) || s[start] == '-' {
		return Finding{}, false
	}
	return Finding{"password", start, end}, true
}

var awsKeyIDRe = lazy(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)

// awsSecretNearKeyID accepts an unlabelled 40-character base64 run (on a line that also holds
// an AWS access key id: the usual "AKIA… / wJalr…" pair).
func awsSecretNearKeyID(s string, m []int) (Finding, bool) {
	start, end := m[0], m[1]
	if end-start != 40 || !base64ch.clear(s, start, end) || end < len(s) && s[end] == '=' {
		return Finding{}, false
	}
	if v := s[start:end]; classes(v) < 3 || !mixedCase(v) {
		return Finding{}, false
	}
	return Finding{"aws-secret-key", start, end}, true
}

// hexAfter returns the anchors prefix+h for every hexadecimal digit h: "SK" alone would
// match almost every line of English.
func hexAfter(prefix string) []string {
	// "ACC" and "ACE" are left out for the same reason (account, access, place, replace);
	// callers add a context anchor to cover them.
	var as []string
	for _, h := range "0123456789abcdef" {
		a := prefix + string(h)
		if a == "ACc" || a == "ACe" {
			continue
		}
		as = append(as, a)
	}
	return as
}

var pemHeaderRe = lazy(`^-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)
var pemFooterRe = lazy(`^-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)

// findPEM redacts a whole PEM private-key block, BEGIN line to END line. Without an END line
// (a truncated memory), it takes the run of base64 (and PEM header) lines after BEGIN.
func findPEM(memo *scanMemo, s string, start, _ int) (Finding, bool) {
	if !strings.HasPrefix(s[start:], "-----BEGIN ") {
		return Finding{}, false
	}
	hdr := pemHeaderRe.FindStringIndex(s[start:min(len(s), start+80)])
	if hdr == nil {
		return Finding{}, false
	}
	body := start + hdr[1]
	if endAt := memo.pemEnd(s, body); endAt >= 0 && memo.pemLastBegin(s, endAt) == start {
		if ftr := pemFooterRe.FindStringIndex(s[endAt:min(len(s), endAt+80)]); ftr != nil {
			return Finding{"private-key", start, endAt + ftr[1]}, true
		}
	}
	// Truncated block.
	end := body
	if end < len(s) && s[end] == '\\' {
		// JSON-escaped: "-----BEGIN …-----\nMIIE…\n…"
		for end < len(s) && (base64ch.has(s[end]) || s[end] == '=' || s[end] == '\\') {
			end++
		}
		return Finding{"private-key", start, end}, true
	}
	for end < len(s) {
		nl := strings.IndexByte(s[end:], '\n')
		lineEnd := len(s)
		if nl >= 0 {
			lineEnd = end + nl
		}
		line := strings.TrimSpace(s[end:lineEnd])
		if len(line) > 2 && strings.IndexByte("-*+", line[0]) >= 0 && line[1] == ' ' {
			line = strings.TrimSpace(line[2:]) // the body written as list items
		}
		if end > body && !pemBodyLine(line) {
			break
		}
		end = lineEnd
		if nl < 0 {
			break
		}
		end++ // past '\n'
	}
	for end > body && (s[end-1] == '\n' || s[end-1] == '\r') {
		end--
	}
	return Finding{"private-key", start, end}, true
}

const maxPEM = 64 << 10 // longest private-key block

// pemEnd returns the offset of the first "-----END " within maxPEM bytes after body, or -1.
// Results are reused: the first END after any offset inside a searched range is the same.
func (m *scanMemo) pemEnd(s string, body int) int {
	if m.pemFrom <= body && body <= m.pemAt && m.pemValid {
		return m.pemFound
	}
	limit := min(len(s), body+maxPEM)
	m.pemFrom, m.pemValid = body, true
	if i := strings.Index(s[body:limit], "-----END "); i >= 0 {
		m.pemAt, m.pemFound = body+i, body+i
	} else {
		m.pemAt, m.pemFound = limit-len("-----END "), -1
	}
	return m.pemFound
}

// pemLastBegin returns the offset of the last "-----BEGIN " before end.
func (m *scanMemo) pemLastBegin(s string, end int) int {
	if m.beginFor != end || !m.beginValid {
		m.beginFor, m.beginValid = end, true
		m.begin = strings.LastIndex(s[max(0, end-maxPEM):end], "-----BEGIN ")
		if m.begin >= 0 {
			m.begin += max(0, end-maxPEM)
		}
	}
	return m.begin
}

func pemBodyLine(line string) bool {
	if line == "" {
		return false
	}
	if k, _, ok := strings.Cut(line, ":"); ok && (k == "Proc-Type" || k == "DEK-Info" || k == "Comment" || k == "Version" || k == "Hash") {
		return true
	}
	for i := 0; i < len(line); i++ {
		if !base64ch.has(line[i]) && line[i] != '=' {
			return false
		}
	}
	return true
}
