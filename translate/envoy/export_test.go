package envoy

// RouteScopeExpression is routeScopeExpression, for the scope hash's test.
var RouteScopeExpression = routeScopeExpression
