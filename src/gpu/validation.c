#include "gpu/validation.h"
#include "gpu/error.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"
#define EXIT_STATUS_ON_MESSAGES 86

static atomic_uint message_count;
static atomic_bool exit_hook_installed;

unsigned gpu_validation_message_count(void)
{
    return atomic_load(&message_count);
}

/* A test that saw a validation message must fail even if every assertion passed. */
static void exit_if_messages_seen(void)
{
    unsigned n = atomic_load(&message_count);
    if (n > 0) {
        fprintf(stderr, "ppocr-vk: %u Vulkan validation message(s); exiting with status %d\n", n,
                EXIT_STATUS_ON_MESSAGES);
        fflush(NULL);
        _exit(EXIT_STATUS_ON_MESSAGES);
    }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    (void)user;
    /* The loader reports through the same messenger (e.g. "Found no drivers!"); those failures
     * already come back as errors from the call that met them and are not the layer's verdict. */
    bool from_loader = data && data->pMessageIdName && strcmp(data->pMessageIdName, "Loader Message") == 0;
    if (!from_loader)
        atomic_fetch_add(&message_count, 1);
    /* one line per message, whatever the layer put inside */
    char line[2048];
    snprintf(line, sizeof line, "%s", data && data->pMessage ? data->pMessage : "(no text)");
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "vulkan %s%s: [%s] %s\n", from_loader ? "loader " : "",
            severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
            data && data->pMessageIdName ? data->pMessageIdName : "-", line);
    return VK_FALSE;
}

bool gpu_validation_layer_present(void)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkLayerProperties *layers = calloc(n, sizeof *layers);
    if (!layers)
        return false;
    bool found = false;
    if (vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(layers[i].layerName, VALIDATION_LAYER) == 0;
    free(layers);
    return found;
}

static void fill_messenger_info(VkDebugUtilsMessengerCreateInfoEXT *m)
{
    *m = (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity =
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message,
    };
}

void gpu_validation_instance_chain(VkInstanceCreateInfo *ci, VkValidationFeaturesEXT *features,
                                   VkDebugUtilsMessengerCreateInfoEXT *messenger)
{
    static const VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
    };
    /* chained into instance creation too, so messages from vkCreateInstance and
     * vkDestroyInstance are counted as well */
    fill_messenger_info(messenger);
    messenger->pNext = ci->pNext;
    *features = (VkValidationFeaturesEXT){
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = messenger,
        .enabledValidationFeatureCount = sizeof enables / sizeof enables[0],
        .pEnabledValidationFeatures = enables,
    };
    ci->pNext = features;
    if (!atomic_exchange(&exit_hook_installed, true))
        atexit(exit_if_messages_seen);
}

int gpu_validation_messenger_create(VkInstance instance, VkDebugUtilsMessengerEXT *out)
{
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT");
    if (!create)
        return gpu_fail(GPU_ERR, "validation: vkCreateDebugUtilsMessengerEXT is not available");
    VkDebugUtilsMessengerCreateInfoEXT info;
    fill_messenger_info(&info);
    VkResult r = create(instance, &info, NULL, out);
    if (r != VK_SUCCESS)
        return gpu_fail_vk(r, "validation: creating the debug messenger");
    return GPU_OK;
}

void gpu_validation_messenger_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger)
{
    if (!messenger)
        return;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT");
    if (destroy)
        destroy(instance, messenger, NULL);
}
