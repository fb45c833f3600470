package kube

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// FileSource serves State from a directory of manifests: every *.yaml, *.yml
// and *.json file below Dir, each possibly multi-document. The directory is
// polled, so edits, new files, renames and deletions all take effect without
// a restart, whatever the editor or tool that made them.
type FileSource struct {
	Dir      string
	Filter   ClassFilter
	Interval time.Duration // poll interval; 250ms when zero
	Logger   *slog.Logger
	// References say which Secrets and ConfigMaps, beside spec.tls's, the
	// owned Ingresses refer to, as ClusterSource.References. Zero: none.
	References Refs

	mu    sync.RWMutex
	state *State
}

var _ Source = (*FileSource)(nil)

// Run implements Source.
func (s *FileSource) Run(ctx context.Context, changed func()) error {
	interval := s.Interval
	if interval == 0 {
		interval = 250 * time.Millisecond
	}
	var last [sha256.Size]byte
	first := true
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		files, sum, err := readTree(s.Dir)
		if err != nil {
			if first {
				return fmt.Errorf("reading manifests: %w", err)
			}
			s.logger().Error("reading manifests", "dir", s.Dir, "err", err)
		} else if first || sum != last {
			last = sum
			s.load(files)
			first = false
			changed()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// TakeChanges implements Source: files are re-read whole, so every change
// is a change to everything.
func (s *FileSource) TakeChanges() Changes { return Changes{All: true} }

// EndpointSlices implements Source.
func (s *FileSource) EndpointSlices(svc types.NamespacedName) []*EndpointSlice {
	if st := s.State(); st != nil {
		return st.EndpointSlices[svc]
	}
	return nil
}

// State implements Source.
func (s *FileSource) State() *State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state
}

func (s *FileSource) load(files []manifestFile) {
	var objs Objects
	for _, f := range files {
		if err := DecodeManifests(strings.NewReader(string(f.data)), f.path, &objs); err != nil {
			// One broken file must not hide the others: report and go on.
			s.logger().Error("skipping undecodable manifests", "err", err)
		}
	}
	st := objs.StateWith(s.Filter, s.References)
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
	s.logger().Info("loaded manifests", "dir", s.Dir, "files", len(files), "ingresses", len(st.Ingresses))
}

func (s *FileSource) logger() *slog.Logger { return loggerOr(s.Logger) }

type manifestFile struct {
	path string
	data []byte
}

// LoadState reads every manifest below path (a file or a directory) once.
// It is what the golden tests use; it is LoadStateWith without references.
func LoadState(path string, filter ClassFilter) (*State, error) {
	return LoadStateWith(path, filter, Refs{})
}

// LoadStateWith is LoadState with the objects the owned Ingresses refer to
// (see Objects.StateWith). It is what `translate -f` uses.
func LoadStateWith(path string, filter ClassFilter, refs Refs) (*State, error) {
	files, _, err := readTree(path)
	if err != nil {
		return nil, err
	}
	var objs Objects
	var decodeErr error
	for _, f := range files {
		if err := DecodeManifests(strings.NewReader(string(f.data)), f.path, &objs); err != nil {
			decodeErr = err
		}
	}
	return objs.StateWith(filter, refs), decodeErr
}

// readTree returns the manifest files below root in lexical order, and a hash
// of their names and contents that changes whenever any of them does.
func readTree(root string) ([]manifestFile, [sha256.Size]byte, error) {
	var files []manifestFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Skip hidden directories (.git, editor state) below the root.
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			if path != root {
				return nil
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil // deleted between listing and reading
			}
			return err
		}
		files = append(files, manifestFile{path: path, data: data})
		return nil
	})
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.path, len(f.data))
		h.Write(f.data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return files, sum, nil
}
