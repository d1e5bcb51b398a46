package sim

import "fmt"

// Note is a sentence for people with a stable key: Key names its template
// (a page's catalogues hold one per language, "sim."+Key), Args fill it as
// fmt does (an Arg may be a Note of its own), and Text is the English,
// the same template filled with the same Args, as the CLI prints it.
type Note struct {
	Key  string
	Args []any
	Text string
}

// String is the note's English.
func (n Note) String() string { return n.Text }

// Say returns the note of key: format (the English template) filled with args.
func Say(key, format string, args ...any) Note {
	return Note{Key: key, Args: args, Text: fmt.Sprintf(format, args...)}
}

// NoteError is an error whose message is a Note, so that a page can say
// it in its language; it wraps the first of its Args that is an error.
type NoteError struct{ Note Note }

func (e *NoteError) Error() string { return e.Note.Text }

// Unwrap is the error the note says more of, if any.
func (e *NoteError) Unwrap() error {
	for _, a := range e.Note.Args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// Refuse returns the error of key (see Note): why a file cannot be read.
func Refuse(key, format string, args ...any) error {
	return &NoteError{Say(key, format, args...)}
}
