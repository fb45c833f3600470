package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Clients at several addresses. Source ranges and rate limits act on the
// client's address, so their tests need clients that are really at
// different addresses: each Netns is a host of its own network (its veth
// pair), and a Client of it opens its connections inside the namespace,
// from the namespace's address, to the host's end of the pair, where Envoy
// listens on every address.

// Client sends requests, each on a new connection, from one address.
type Client struct {
	// Address is where Envoy is reached from the client's network; the
	// caller adds the port.
	Address string
	// IP is the client's own address, as Envoy sees it.
	IP     string
	client *http.Client
}

// LoopbackClient is a client on this host's loopback, 127.0.0.1.
func LoopbackClient() *Client {
	return &Client{Address: "127.0.0.1", IP: "127.0.0.1", client: newClient()}
}

// Client returns a client inside the namespace: its requests come from
// n.IP and reach this host at n.HostIP.
func (n *Netns) Client() *Client {
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return n.dial(ctx, network, address)
	}
	return &Client{Address: n.HostIP, IP: n.IP, client: &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true, DialContext: dial},
		CheckRedirect: noRedirects,
	}}
}

// dial opens a connection from inside the namespace.
func (n *Netns) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var conn net.Conn
	err := n.inside(func() (io.Closer, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, address)
		conn = c
		return c, err
	})
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// inside makes a socket (open returns it) from inside the namespace. A
// socket stays in the namespace it was made in, so only its making needs
// the thread to be there: the goroutine holds its thread, moves it into
// the namespace, calls open, and moves it back. A thread that cannot be
// moved back is never handed to another goroutine (it stays locked, and Go
// ends it), and the socket is closed.
func (n *Netns) inside(open func() (io.Closer, error)) error {
	target, err := os.Open(filepath.Join("/run/netns", n.Name))
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", n.Name, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening this thread's network namespace: %w", err)
	}
	defer home.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %w", n.Name, err)
	}
	socket, openErr := open()
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		if openErr == nil {
			socket.Close()
		}
		return fmt.Errorf("leaving network namespace %s: %w", n.Name, err)
	}
	runtime.UnlockOSThread()
	return openErr
}

// Get sends GET path to port on the client's Envoy address, with the Host
// and any other headers given.
func (c *Client) Get(port int, host, path string, header http.Header) (Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(c.Address, fmt.Sprint(port))+path, nil)
	if err != nil {
		return Response{}, err
	}
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("GET %s%s from %s: %w", host, path, c.IP, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("reading the response to %s%s: %w", host, path, err)
	}
	r := Response{Status: resp.StatusCode, Backend: resp.Header.Get("X-Backend"), Body: string(body), Header: resp.Header}
	if r.Backend != "" {
		if err := json.Unmarshal(body, &r.Echo); err != nil {
			return r, fmt.Errorf("backend %q sent a reply that is not echo's JSON: %w", r.Backend, err)
		}
	}
	return r, nil
}
