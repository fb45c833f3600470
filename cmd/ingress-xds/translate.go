package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

func runTranslate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	path := fs.String("f", "", "manifest file or directory (required)")
	class := fs.String("ingress-class", kube.DefaultClassName, "IngressClass name to serve, as serve's flag")
	controller := fs.String("controller-class", kube.DefaultControllerName, "serve the IngressClasses (in the manifests) whose spec.controller is this, as serve's flag")
	var tf translateFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tf.nginxDefaultsByClass(fs, *controller)
	if err := tf.validate(); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("-f PATH is required")
	}
	// As in serve --manifests: class-less Ingresses in files are ours.
	st, err := kube.LoadStateWith(*path, kube.ClassFilter{ClassName: *class, ControllerName: *controller, WatchClassless: true}, tf.references())
	if err != nil {
		// Undecodable documents are skipped, as serve does; say so.
		fmt.Fprintf(os.Stderr, "warning: %v\n", err)
	}
	if st == nil {
		return fmt.Errorf("no manifests read from %s", *path)
	}
	st = tf.resolveOnce(context.Background(), st)
	res, err := translate.Translate(st, tf.options())
	if err != nil {
		return err
	}
	out, err := translate.RenderJSON(res)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
