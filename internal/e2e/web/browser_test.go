package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/xce-sched/xce/internal/proctest"
)

// tab is a headless chromium's tab, and what the page wrote to the
// console (calls of the console API, uncaught exceptions, the browser's
// log: a failed request is an error there).
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	log []chromedp.ConsoleMessage
}

// startBrowser starts Debian's chromium, headless, with a fresh profile
// directory, and returns its tab; it skips t when chromium is not
// installed. The browser process, and any process of it that outlives
// it (found by the profile directory on its command line), are ended at
// the end of the test.
func startBrowser(t *testing.T) *tab {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium): the browser tests need it")
	}
	profile, err := os.MkdirTemp("", "xce-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		// As root chromium refuses to start with its sandbox; the pages
		// are this test's own, on loopback.
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	tb := &tab{t: t, ctx: ctx}
	var browser proctest.Proc
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx)
		cancelTab()
		cancelAlloc()
		if browser.PID != 0 {
			browser.Kill(waitShort)
		}
		for _, p := range profileProcs(profile) {
			p.Kill(waitShort)
		}
		if err := os.RemoveAll(profile); err != nil {
			t.Errorf("chromium's profile: %v", err)
		}
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser, for the test's life (a timeout here would end it)
		t.Fatalf("chromium does not start: %v", err)
	}
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		browser, _ = proctest.Record(p.Pid)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.log = append(tb.log, m)
			tb.mu.Unlock()
		}
	}()
	return tb
}

// profileProcs returns the processes whose command line names profile
// as their user data directory: chromium's, left after it.
func profileProcs(profile string) []proctest.Proc {
	want := "--user-data-dir=" + profile
	ents, _ := os.ReadDir("/proc")
	var out []proctest.Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(b), "\x00") {
			if arg == want {
				if p, err := proctest.Record(pid); err == nil {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}

// do runs actions on the tab, bounded by waitShort.
func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitShort)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression in the page into v's type.
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitShort)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait polls a JavaScript condition every 10 ms until it is true, for at
// most d; it returns how long that took. An evaluation that fails (the
// page is between two documents) counts as false.
func (b *tab) wait(what, cond string, d time.Duration) time.Duration {
	b.t.Helper()
	began := time.Now()
	holds := func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, waitShort)
		defer cancel()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		return err == nil && v
	}
	for !holds() {
		if time.Since(began) > d {
			b.t.Fatalf("%s: not within %v (%s)", what, d, cond)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(began)
}

// errors returns the console's errors and uncaught exceptions so far.
func (b *tab) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.log {
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			out = append(out, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
		}
	}
	return out
}

// noConsoleErrors fails the test if the page logged an error.
func (b *tab) noConsoleErrors(when string) {
	b.t.Helper()
	if errs := b.errors(); len(errs) > 0 {
		b.t.Errorf("%s: the console has errors:\n%s", when, strings.Join(errs, "\n"))
	}
}

// key presses a key (kb's names) on what has the focus.
func (b *tab) key(k string) { b.t.Helper(); b.do(chromedp.KeyEvent(k)) }

// tabTo presses Tab from the top of the page (its first link, "Skip to
// the content") until the element with id has the focus (at most 100
// presses), and returns the ids or texts of what had it on the way.
func (b *tab) tabTo(id string) []string {
	b.t.Helper()
	eval[bool](b, `(document.querySelector('a.skip').focus(), document.activeElement.classList.contains('skip'))`)
	var seen []string
	for range 100 {
		b.key(kb.Tab)
		cur := eval[string](b, `(() => { const e = document.activeElement; if (!e || e === document.body) return ''; return e.id || (e.tagName + ':' + (e.textContent || '').trim().slice(0, 30)); })()`)
		seen = append(seen, cur)
		if cur == id {
			return seen
		}
	}
	b.t.Fatalf("Tab never reached #%s; it went through %q", id, seen)
	return nil
}

// unreachable returns the page's controls that the keyboard cannot
// reach: a shown link, button, field or listbox with a negative
// tabindex, and anything shown with a pointer cursor that is not inside
// a link, button, field, label or listbox.
const unreachable = `(() => {
  const bad = [];
  const shown = (el) => !el.closest('[hidden]') && el.getClientRects().length > 0;
  for (const el of document.querySelectorAll('a[href], button, input, select, textarea, [role=button], [role=link], [role=listbox], [role=option]')) {
    if (!shown(el) || el.getAttribute('role') === 'option') continue;
    if (el.tabIndex < 0) bad.push('tabindex<0: ' + el.outerHTML.slice(0, 100));
  }
  for (const el of document.querySelectorAll('body *')) {
    if (!shown(el) || getComputedStyle(el).cursor !== 'pointer') continue;
    if (!el.closest('a[href], button, input, select, label, summary, [role=listbox]')) bad.push('pointer: ' + el.outerHTML.slice(0, 100));
  }
  for (const opt of document.querySelectorAll('[role=option]')) {
    const box = opt.closest('[role=listbox]');
    if (!box || box.tabIndex < 0) { bad.push('option outside a focusable listbox: ' + opt.id); break; }
  }
  return bad;
})()`

// accessible fails the test if the page has controls the keyboard
// cannot reach.
func (b *tab) accessible(view string) {
	b.t.Helper()
	if bad := eval[[]string](b, unreachable); len(bad) > 0 {
		b.t.Errorf("%s: not reachable by keyboard:\n%s", view, strings.Join(bad, "\n"))
	}
}

// shot saves a screenshot of the page as DIR/dashboard-NAME.png when
// XCE_DASHBOARD_SHOTS=DIR (docs/ takes them).
func (b *tab) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("XCE_DASHBOARD_SHOTS")
	if dir == "" {
		return
	}
	time.Sleep(300 * time.Millisecond) // let the last refetch draw: a picture, not a check
	ctx, cancel := context.WithTimeout(b.ctx, waitShort)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the window, 1280×900: as a user sees it
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// report appends a line to XCE_BENCH_OUT, when set (BENCHMARKS.md takes
// the measurements from there), and logs it.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if path := os.Getenv("XCE_BENCH_OUT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintln(f, line)
	}
}
