extension Duration {
    /// The duration in (fractional) seconds, for `Date` arithmetic, rates and reports. One
    /// definition for every module.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
