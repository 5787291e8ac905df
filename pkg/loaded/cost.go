package loaded

// BytesPerToken is the conservative token estimate every command uses:
// tokens = ceil(UTF-8 bytes / 3). English prose runs near 4 bytes a token
// and CJK text near 3, so the estimate errs towards more tokens. It is the
// measure of what loaded text costs every session (the plan's per-candidate
// cost) and of the SessionStart budget.
const BytesPerToken = 3

// Tokens estimates the tokens of s.
func Tokens(s string) int { return (len(s) + BytesPerToken - 1) / BytesPerToken }
