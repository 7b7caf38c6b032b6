package cli

import (
	"regexp"
	"strings"
)

// redact hides the credentials in a NATS URL, or in each URL of a
// comma-separated list (as nats.go takes them): a password, and a token
// (the user part of a URL without a password, nats://TOKEN@host).
func redact(u string) string {
	return rewriteCredentials(u, func(string) string { return "xxxxx" })
}

// credentials returns the passwords and tokens of the URLs in u, as
// redact finds them.
func credentials(u string) []string {
	var secrets []string
	rewriteCredentials(u, func(s string) string {
		secrets = append(secrets, s)
		return s
	})
	return secrets
}

// showsCredentials reports whether msg holds any three consecutive bytes
// of one of the credentials (all of a shorter one): a message that quotes
// part of a URL nats.go cut or could not parse.
func showsCredentials(msg string, secrets []string) bool {
	for _, s := range secrets {
		n := min(3, len(s))
		for i := 0; n > 0 && i+n <= len(s); i++ {
			if strings.Contains(msg, s[i:i+n]) {
				return true
			}
		}
	}
	return false
}

// rewriteCredentials returns u with the credentials of each of its URLs
// replaced by what hide returns for them. It does not parse the URLs: a
// password may hold what a URL parser reads as the end of the user part
// or of a URL (",", "?", "/", "#"). Each URL's credentials run from its
// "://" to the last "@" before the next URL's "://" (the password after
// the first ":", else the whole user part, a token); in text without
// "://" all before its last "@" is.
func rewriteCredentials(u string, hide func(secret string) string) string {
	starts := schemeSep.FindAllStringIndex(u, -1)
	if len(starts) == 0 {
		if at := strings.LastIndex(u, "@"); at >= 0 {
			return hide(u[:at]) + u[at:]
		}
		return u
	}
	var b strings.Builder
	b.WriteString(u[:starts[0][0]])
	for i, s := range starts {
		end := len(u)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		rest := u[s[1]:end] // after "scheme://", up to the next URL's scheme
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if user, password, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
				rest = user + ":" + hide(password) + rest[at:]
			} else {
				rest = hide(rest[:at]) + rest[at:]
			}
		}
		b.WriteString(u[s[0]:s[1]] + rest)
	}
	return b.String()
}

// schemeSep finds each URL's "scheme://" in a list.
var schemeSep = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`)
