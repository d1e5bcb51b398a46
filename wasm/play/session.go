package play

import (
	"servelab/modelspecs"
	"servelab/sim"
)

// Session is what one page holds beside its settings: the models,
// profiles and trace uploaded in it (they live as long as the tab; a link
// names them and says so when they are missing), and the memory its runs
// reuse. The page owns one; a State names it.
type Session struct {
	models   []modelspecs.Model
	profiles map[string]*sim.Profile
	trace    struct {
		name string
		reqs []sim.Request
	}
	gen int // uploads so far (FilesGen)

	pool  []buffers   // the trace arrays of runs no longer shown (two in compare mode)
	sweep sim.Scratch // what AttainmentAt's runs reuse, one after another
}

// NewSession is an empty session.
func NewSession() *Session { return &Session{} }

// profileMap is the session's uploaded profiles (nil for no session).
func (ss *Session) profileMap() map[string]*sim.Profile {
	if ss == nil {
		return nil
	}
	return ss.profiles
}

// giveBack keeps a run's arrays for the next run (dropped with no session).
func (ss *Session) giveBack(b buffers) {
	if ss != nil {
		ss.pool = append(ss.pool, b)
	}
}

// sweepMemory is the memory AttainmentAt's runs reuse: each is read before
// the next starts (a fresh one with no session).
func (ss *Session) sweepMemory() *sim.Scratch {
	if ss == nil {
		return &sim.Scratch{}
	}
	return &ss.sweep
}
