package cli

import (
	"fmt"
	"net/url"
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

// encodeAdvice says how to write a password nats.go reads as written.
const encodeAdvice = "percent-encode what a password holds of , / ? # % @ : and space (%2C %2F %3F %23 %25 %40 %3A %20)"

// natsURLs returns the URLs nats.go makes of u (it cuts the value at
// every ",", even inside a password, and parses each part, adding
// "nats://" where a part has none), or an error that says which part
// cannot be parsed without quoting it: url.Parse's message would show
// the part, password and all.
func natsURLs(u string) ([]*url.URL, error) {
	var urls []*url.URL
	for part := range strings.SplitSeq(u, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "://") {
			part = "nats://" + part
		}
		p, err := url.Parse(part)
		if err != nil {
			return nil, fmt.Errorf("nats.go cannot parse URL %d of the list, cut at each comma (its message, which would show the password, is left out): %s",
				len(urls)+1, encodeAdvice)
		}
		urls = append(urls, p)
	}
	return urls, nil
}

// hideCredentials returns msg, an error of nats.go's for the -nats value
// u, with every credential of u replaced by xxxxx: as redact finds them,
// and as nats.go read them from its parsed URLs (a password's part before
// a comma, decoded). Credentials of fewer than 3 bytes are left, lest
// every such letter of the message go.
func hideCredentials(msg, u string, urls []*url.URL) string {
	secrets := credentials(u)
	for _, p := range urls {
		if p.User == nil {
			continue
		}
		if pw, ok := p.User.Password(); ok {
			secrets = append(secrets, pw)
		} else {
			secrets = append(secrets, p.User.Username())
		}
	}
	for _, s := range secrets {
		for _, c := range strings.Split(s, ",") {
			if len(c) >= 3 {
				msg = strings.ReplaceAll(msg, c, "xxxxx")
			}
		}
	}
	return msg
}

// commaAdvice is what to add to a connection error of the -nats value u
// where a password holds a comma, which nats.go took for the end of a URL.
func commaAdvice(u string) string {
	for _, s := range credentials(u) {
		if strings.Contains(s, ",") {
			return " (a password holds a comma, which nats.go reads as the end of a URL: " + encodeAdvice + ")"
		}
	}
	return ""
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
