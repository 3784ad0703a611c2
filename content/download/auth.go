package download

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxTokenAnswer bounds the SSO server's answer: a JSON object with a token or two.
const maxTokenAnswer = 1 << 20

// credential is what a downloader obtains once and sends with every request (the
// Authorization header of an access token from its AuthURL, or a ULN session key),
// shared by all its requests; one of them obtains it at a time.
type credential struct {
	mu    sync.Mutex
	value string // "" until obtained, and after it was refused
}

// get is the credential, obtained first when there is none.
func (c *credential) get(ctx context.Context, obtain func(context.Context) (string, error)) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value == "" {
		v, err := obtain(ctx)
		if err != nil {
			return "", err
		}
		c.value = v
	}
	return c.value, nil
}

// expire forgets the credential a request was refused with, unless another request has
// replaced it meanwhile.
func (c *credential) expire(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value == v {
		c.value = ""
	}
}

// authorization is the Authorization header of a request to the remote's host:
// "Token <token>", or "Bearer <access token>" with an AuthURL (pulp_ansible's
// TokenAuthHttpDownloader).
func (d *Downloader) authorization(ctx context.Context) (string, error) {
	if d.cfg.AuthURL == "" {
		return "Token " + d.cfg.Token, nil
	}
	return d.cred.get(ctx, func(ctx context.Context) (string, error) {
		tok, err := d.obtain(ctx)
		return "Bearer " + tok, err
	})
}

// obtain asks the SSO server at AuthURL for an access token, the token being the
// refresh token of the "cloud-services" client, through the remote's proxy and TLS
// settings. It is bounded by the connect and read timeouts.
func (d *Downloader) obtain(ctx context.Context) (string, error) {
	fail := func(status int, err error) (string, error) {
		return "", &Error{URL: d.cfg.AuthURL, Status: status, Attempts: 1, Err: fmt.Errorf("obtain an access token: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(d.cfg.ConnectTimeout, 30*time.Second)+readTimeout(d.cfg))
	defer cancel()
	if d.limiter != nil {
		if err := d.limiter.wait(ctx); err != nil {
			return fail(0, err)
		}
	}
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {"cloud-services"}, "refresh_token": {d.cfg.Token}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.AuthURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fail(0, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "pith")
	resp, err := d.client.Do(req)
	if err != nil {
		return fail(0, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return fail(resp.StatusCode, errors.New(resp.Status))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer+1))
	if err != nil {
		return fail(0, err)
	}
	if len(body) > maxTokenAnswer {
		return fail(0, fmt.Errorf("the answer is larger than %d bytes", maxTokenAnswer))
	}
	var answer struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.AccessToken == "" {
		return fail(0, errors.New("the answer has no access_token"))
	}
	return answer.AccessToken, nil
}
