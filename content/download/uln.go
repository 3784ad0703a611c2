package download

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"pith/secret"
)

// ULNKeyHeader carries the session key of a ULN login on every download (pulp_rpm's
// UlnDownloader).
const ULNKeyHeader = "X-ULN-API-User-Key"

// maxULNAnswer bounds the ULN server's XML-RPC answer: one string or one fault.
const maxULNAnswer = 64 << 10

// isULN reports whether u is a ULN URL (uln://<channel label>/<path>).
func isULN(u string) bool { return strings.HasPrefix(strings.ToLower(u), "uln://") }

// ulnURL maps uln://<channel>/<path> to where the ULN server serves it:
// <server>/XMLRPC/GET-REQ/<channel>/<path>, as pulp_rpm builds it.
func (d *Downloader) ulnURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "", fmt.Errorf("%q is not a ULN URL (uln://<channel label>/<path>)", secret.Redact(u))
	}
	return strings.TrimSuffix(d.cfg.ULNServer, "/") + "/XMLRPC/GET-REQ/" + p.Host + "/" + strings.TrimPrefix(p.EscapedPath(), "/"), nil
}

// ulnKey is the session key of the ULN login, logging in when there is none.
func (d *Downloader) ulnKey(ctx context.Context) (string, error) { return d.cred.get(ctx, d.ulnLogin) }

// ulnLogin calls auth.login(username, password) on the ULN server's XML-RPC API
// (<server>/rpc/api) through the remote's proxy and TLS settings, and returns the
// session key. A fault (wrong credentials) fails for good; a network error or a 5xx is
// worth another attempt. The password is never part of an error.
func (d *Downloader) ulnLogin(ctx context.Context) (string, error) {
	api := strings.TrimSuffix(d.cfg.ULNServer, "/") + "/rpc/api"
	fail := func(err error) error {
		msg := err.Error()
		if d.cfg.Password != "" {
			msg = strings.ReplaceAll(msg, d.cfg.Password, "********")
		}
		return fmt.Errorf("ULN server %s: login as %q: %s", secret.Redact(api), d.cfg.Username, msg)
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(d.cfg.ConnectTimeout, 30*time.Second)+readTimeout(d.cfg))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api, bytes.NewReader(xmlrpcCall("auth.login", d.cfg.Username, d.cfg.Password)))
	if err != nil {
		return "", fail(err)
	}
	req.Header.Set("Content-Type", "text/xml")
	req.Header.Set("User-Agent", "pith")
	resp, err := d.client.Do(req)
	if err != nil {
		if permanent(err) {
			return "", fail(err)
		}
		return "", &retryable{err: fail(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.CopyN(io.Discard, resp.Body, 4<<10)
		err := fail(errors.New(resp.Status))
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return "", &retryable{err: err}
		}
		return "", err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxULNAnswer+1))
	if err != nil {
		return "", &retryable{err: fail(err)}
	}
	if len(body) > maxULNAnswer {
		return "", fail(fmt.Errorf("the answer is larger than %d bytes", maxULNAnswer))
	}
	key, err := xmlrpcString(body)
	if err != nil {
		return "", fail(err)
	}
	if key == "" || len(key) > 1024 || strings.ContainsFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "", fail(errors.New("the answer is not a session key"))
	}
	return key, nil
}

// xmlrpcCall encodes an XML-RPC methodCall with string parameters.
func xmlrpcCall(method string, params ...string) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header + "<methodCall><methodName>")
	xml.EscapeText(&b, []byte(method))
	b.WriteString("</methodName><params>")
	for _, p := range params {
		b.WriteString("<param><value><string>")
		xml.EscapeText(&b, []byte(p))
		b.WriteString("</string></value></param>")
	}
	b.WriteString("</params></methodCall>")
	return b.Bytes()
}

// xmlrpcValue is an XML-RPC value: a string (typed or not), an int or a struct.
type xmlrpcValue struct {
	Text   string  `xml:",chardata"`
	String *string `xml:"string"`
	Int    *string `xml:"int"`
	I4     *string `xml:"i4"`
	Struct *struct {
		Members []xmlrpcMember `xml:"member"`
	} `xml:"struct"`
}

type xmlrpcMember struct {
	Name  string      `xml:"name"`
	Value xmlrpcValue `xml:"value"`
}

func (v xmlrpcValue) members() []xmlrpcMember {
	if v.Struct == nil {
		return nil
	}
	return v.Struct.Members
}

func (v xmlrpcValue) str() string {
	for _, p := range []*string{v.String, v.Int, v.I4} {
		if p != nil {
			return *p
		}
	}
	return strings.TrimSpace(v.Text)
}

// xmlrpcString reads a methodResponse holding one string; a fault is an error with its
// code and message.
func xmlrpcString(body []byte) (string, error) {
	var r struct {
		XMLName xml.Name      `xml:"methodResponse"`
		Params  []xmlrpcValue `xml:"params>param>value"`
		Fault   *xmlrpcValue  `xml:"fault>value"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("the answer is not an XML-RPC response: %w", err)
	}
	if r.Fault != nil {
		code, msg := "", ""
		for _, m := range r.Fault.members() {
			switch m.Name {
			case "faultCode":
				code = m.Value.str()
			case "faultString":
				msg = m.Value.str()
			}
		}
		return "", fmt.Errorf("fault %s: %.200s", code, msg)
	}
	if len(r.Params) != 1 || r.Params[0].Struct != nil {
		return "", errors.New("the answer is not one string")
	}
	return r.Params[0].str(), nil
}
