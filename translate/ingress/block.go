package ingress

import "github.com/ingress-xds/ingress-xds/translate/ir"

// block is what every listener refuses (the ConfigMap's block-user-agents
// and block-referers): one value per version of the ConfigMap, so that
// the listeners stay the same values while it does not change.
func (c *controllerConfig) block() *ir.RequestBlock {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Block
}
