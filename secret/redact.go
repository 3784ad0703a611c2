package secret

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// userinfo matches the credentials of a URL in text: scheme://userinfo@ (up to the
// last @ before the path, as url.Parse reads it).
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^/?#\s]*)@`)

// Redact replaces the credentials of every URL in s: user:password@ becomes
// user:xxxxx@ (as url.URL.Redacted writes it), and a user alone, often a token, xxxxx@.
func Redact(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfo.FindStringSubmatch(m)
		user, _, hasPassword := strings.Cut(sub[2], ":")
		if !hasPassword {
			user = ""
		} else {
			user += ":"
		}
		return sub[1] + user + "xxxxx@"
	})
}

// Handler wraps a log handler so that no line it writes shows a URL's credentials:
// the message and every string, error and Stringer attribute are redacted.
func Handler(h slog.Handler) slog.Handler { return redacting{h} }

type redacting struct{ h slog.Handler }

func (r redacting) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redacting) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redacting) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redacting{r.h.WithAttrs(red)}
}

func (r redacting) WithGroup(name string) slog.Handler { return redacting{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, x := range g {
			red[i] = redactAttr(x)
		}
		a.Value = slog.GroupValue(red...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			return a
		}
		if red := Redact(s); red != s {
			a.Value = slog.StringValue(red)
		}
	}
	return a
}
