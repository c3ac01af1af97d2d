/// A group of flags that are also configuration keys: a flag that is set wins over the file
/// and the environment.
protocol SettingFlags {
    func apply(to settings: inout Settings)
}
